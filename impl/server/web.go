package server

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/internal/strictjson"
)

// The approvers' page (docs/approvers.md), served by ServeWeb with /metrics and
// /healthz: an approver signs in with a token, sees the inbox live, and approves or
// rejects. The page is a client like the others: each page session holds an
// in-process wire session bound to the credential that signed in, and every read
// and decision of the page is a request line decoded and handled by that session
// (session.handle: role, scope, quotas, refusals, the node), its answer sent once
// durable (Server.release). So the page can do nothing that the token could not
// do on the wire, and the audit trail knows who decided.
//
// What keeps other sites out: a loopback listener answers loopback hosts only
// (DNS rebinding); the session cookie is HttpOnly and SameSite=Strict; every
// request that changes state is a POST of JSON with the page's own Origin; and
// every request of a signed-in page also carries the session's CSRF token in a
// header. The CSRF token lives in the page's sessionStorage, which is the
// origin's alone, while cookies are shared by every port of a host: another
// local web server that a browser visits gets the cookie, never the token.

// Limits of the page's sessions and streams (each listener has its own).
const (
	webSessionsMax          = 256              // page sessions at once; a sign-in beyond is refused (overloaded)
	webSessionsPerTokenMax  = 16               // of one token; its least recently used ends for a new one
	webSessionIdle          = 30 * time.Minute // a session with no request and no open stream for this long ends
	webSessionLifetime      = 12 * time.Hour   // a session ends this long after its sign-in, whatever it does
	webStreamsMax           = 32               // event streams at once: half the listener's connections
	webStreamsPerSessionMax = 4                // a few tabs of one approver
	webHeartbeat            = 15 * time.Second // a comment on a quiet stream, so that proxies and the page see it alive
	webStreamPoll           = time.Second      // how often a stream checks that its session still holds
	// webBodyBytesMax bounds a request body: a page's request, wrapped in the wire's
	// envelope, must fit one request line.
	webBodyBytesMax = proto.LineBytesMax - 128
	webSecretBytes  = 32 // a session id and a CSRF token: 256 random bits each
)

// webCSRFHeader names the header that carries a page session's CSRF token.
const webCSRFHeader = "X-Soundgate-Csrf"

// webSecurityHeaders are set on every answer of the HTTP listener: the page runs its
// own script and style files only, fetches from its own origin only, cannot be
// framed, and nothing is cached or leaks a referrer.
var webSecurityHeaders = [][2]string{
	{"Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"},
	{"X-Content-Type-Options", "nosniff"},
	{"Referrer-Policy", "no-referrer"},
	{"Cache-Control", "no-store"},
	{"X-Frame-Options", "DENY"},
	{"Cross-Origin-Resource-Policy", "same-origin"},
	{"Cross-Origin-Opener-Policy", "same-origin"},
}

// webTimeouts are the HTTP listener's timeouts and the streams' pace; tests of the
// package shorten them.
type webTimeouts struct {
	readHeader, read, write, idle time.Duration
	heartbeat, poll               time.Duration
}

// defaultWebTimeouts are ServeWeb's.
func defaultWebTimeouts() webTimeouts {
	return webTimeouts{readHeader: webReadHeaderTimeout, read: webReadTimeout, write: webWriteTimeout,
		idle: webIdleTimeout, heartbeat: webHeartbeat, poll: webStreamPoll}
}

// web is the page's state on one listener: its sessions and streams.
type web struct {
	s      *Server
	cookie string // the session cookie's name, with the listener's port: gates on two ports of a host keep theirs
	times  webTimeouts
	now    func() time.Time

	mu       sync.Mutex
	sessions map[[sha256.Size]byte]*pageSession // by the hash of the session id
	streams  int
}

// pageSession is one signed-in page: its credential, CSRF token and wire session.
type pageSession struct {
	key     [sha256.Size]byte // the hash of its id (the cookie's value), its key in web.sessions
	csrf    string
	cred    *Credential
	created time.Time
	done    chan struct{} // closed when it ends: its streams stop

	// Under web.mu.
	used    time.Time // its last request, or the end of its last stream
	streams int

	mu  sync.Mutex // serialises the requests of the wire session, as one connection's reader does
	ss  *session
	seq int64 // the id of its last request line
}

func newWeb(s *Server, l net.Listener, times webTimeouts) *web {
	cookie := "soundgate-session"
	if a, ok := l.Addr().(*net.TCPAddr); ok {
		cookie += "-" + strconv.Itoa(a.Port)
	}
	return &web{s: s, cookie: cookie, times: times, now: time.Now, sessions: map[[sha256.Size]byte]*pageSession{}}
}

// webError is a refusal of the page's API: its status, a type the page can switch
// on (the protocol's error types where one fits), and a message for people.
type webError struct {
	status int
	typ    string
	msg    string
}

func (e *webError) Error() string { return e.typ + ": " + e.msg }

func errWeb(status int, typ, format string, args ...any) *webError {
	return &webError{status: status, typ: typ, msg: fmt.Sprintf(format, args...)}
}

// writeJSON sends v as the JSON answer with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only the page's own types are marshalled
		status, b = http.StatusInternalServerError, []byte(`{"error":{"type":"internal","message":"soundgate: an answer could not be encoded"}}`)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeError sends a refusal as {"error": {"type", "message", "field"}}.
func writeError(w http.ResponseWriter, e *webError) {
	writeJSON(w, e.status, map[string]any{"error": map[string]string{"type": e.typ, "message": e.msg}})
}

// refuse counts and logs a refusal of the server's own rules (the refusals metric),
// naming the token by its name only, and sends it.
func (wb *web) refuse(w http.ResponseWriter, r *http.Request, e *webError, kind string, attrs ...any) {
	wb.s.refused.add(wb.s.log, kind, append([]any{"remote", r.RemoteAddr, "via", "page", "why", e.msg}, attrs...)...)
	writeError(w, e)
}

// checkOrigin refuses a request whose Origin is not the page's own: a POST must name
// it (browsers send it with every POST), a GET may omit it. The page's origin is
// http:// and the Host the listener accepted (on a loopback listener, a loopback
// host). Sec-Fetch-Site, when the browser sends it, must say same-origin too.
func checkOrigin(r *http.Request, post bool) *webError {
	origin := r.Header.Get("Origin")
	switch {
	case origin == "" && post:
		return errWeb(http.StatusForbidden, "forbidden", "a POST needs an Origin header (cross-origin requests are refused)")
	case origin != "" && origin != "http://"+r.Host:
		return errWeb(http.StatusForbidden, "forbidden", "cross-origin request refused: Origin %s is not this page's", strconv.Quote(origin))
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
		return errWeb(http.StatusForbidden, "forbidden", "cross-origin request refused (Sec-Fetch-Site: %s)", strconv.Quote(site))
	}
	return nil
}

// readBody checks a POST's Content-Type (application/json) and reads its body, at
// most webBodyBytesMax bytes.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *webError) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, errWeb(http.StatusUnsupportedMediaType, "invalid_request", "the body must be JSON (Content-Type: application/json)")
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webBodyBytesMax))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return nil, errWeb(http.StatusRequestEntityTooLarge, "invalid_request", "the body is over %d bytes", webBodyBytesMax)
	case err != nil:
		return nil, errWeb(http.StatusBadRequest, "invalid_request", "the body could not be read")
	}
	return b, nil
}

// post is the first check of every POST of the page: its Origin is the page's own
// (a refusal counted and logged), and its body JSON of a bounded size.
func (wb *web) post(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	if e := checkOrigin(r, true); e != nil {
		wb.refuse(w, r, e, proto.ErrForbidden.Type)
		return nil, false
	}
	body, e := readBody(w, r)
	if e != nil {
		writeError(w, e)
		return nil, false
	}
	return body, true
}

// newSecret returns webSecretBytes random bytes, base64url.
func newSecret() string {
	b := make([]byte, webSecretBytes)
	rand.Read(b) // never fails (crypto/rand: it crashes the program rather)
	return base64.RawURLEncoding.EncodeToString(b)
}

// holds reports whether the server's current roles hold cred as it was.
func (s *Server) holds(cred *Credential) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.roles.holds(cred)
}

// expiredLocked says why ps has ended by the clock, or "".
func (wb *web) expiredLocked(ps *pageSession, now time.Time) string {
	switch {
	case now.Sub(ps.created) >= webSessionLifetime:
		return fmt.Sprintf("the session is over %s old: sign in again", webSessionLifetime)
	case ps.streams == 0 && now.Sub(ps.used) >= webSessionIdle:
		return fmt.Sprintf("the session was idle for %s: sign in again", webSessionIdle)
	}
	return ""
}

// endLocked ends ps, unless it has ended: its cookie is worth nothing from now on
// and its streams stop. The caller that ended it ends its wire session (finish)
// once it has unlocked wb.mu.
func (wb *web) endLocked(ps *pageSession) bool {
	if _, ok := wb.sessions[ps.key]; !ok {
		return false // ended already
	}
	delete(wb.sessions, ps.key)
	close(ps.done)
	return true
}

// finish lets the node forget the wire sessions of page sessions that ended.
func (wb *web) finish(ended []*pageSession) {
	for _, ps := range ended {
		wb.s.node.Leave(ps.ss.party)
	}
}

// signIn makes a page session for cred, ending the expired ones and, when the token
// holds webSessionsPerTokenMax, its least recently used.
func (wb *web) signIn(cred *Credential, remote string) (id string, ps *pageSession, _ *webError) {
	now := wb.now()
	wb.mu.Lock()
	var ended []*pageSession
	defer func() { wb.mu.Unlock(); wb.finish(ended) }()
	var oldest *pageSession
	mine := 0
	for _, o := range wb.sessions {
		if wb.expiredLocked(o, now) != "" && wb.endLocked(o) {
			ended = append(ended, o)
			continue
		}
		if o.cred.hash == cred.hash {
			mine++
			if oldest == nil || o.used.Before(oldest.used) {
				oldest = o
			}
		}
	}
	if mine >= webSessionsPerTokenMax && wb.endLocked(oldest) {
		ended = append(ended, oldest)
	}
	if len(wb.sessions) >= webSessionsMax {
		return "", nil, errWeb(http.StatusServiceUnavailable, "overloaded", "%d page sessions are open, the most; sign out elsewhere or wait for one to expire", webSessionsMax)
	}
	id = newSecret()
	ss := newSession(wb.s, remote)
	ss.cred = cred
	ss.kick = func() {} // the page takes its answers itself, right after handle
	ps = &pageSession{key: sha256.Sum256([]byte(id)), csrf: newSecret(), cred: cred, created: now, used: now,
		done: make(chan struct{}), ss: ss}
	wb.sessions[ps.key] = ps
	return id, ps, nil
}

// session returns the page session of r's cookie, refused when there is none, it
// has ended, the roles no longer hold its token, or r lacks its CSRF token. A
// request counts as the session's activity.
func (wb *web) session(w http.ResponseWriter, r *http.Request) (*pageSession, bool) {
	c, err := r.Cookie(wb.cookie)
	if err != nil || c.Value == "" {
		writeError(w, errWeb(http.StatusUnauthorized, "unauthenticated", "not signed in"))
		return nil, false
	}
	now := wb.now()
	wb.mu.Lock()
	ps := wb.sessions[sha256.Sum256([]byte(c.Value))]
	why, ended := "not signed in (the session ended or is unknown)", false
	if ps != nil {
		if why = wb.expiredLocked(ps, now); why != "" {
			ended = wb.endLocked(ps)
		}
	}
	wb.mu.Unlock()
	if ended {
		wb.finish([]*pageSession{ps})
	}
	if ps == nil || why != "" {
		writeError(w, errWeb(http.StatusUnauthorized, "unauthenticated", "%s", why))
		return nil, false
	}
	if !wb.s.holds(ps.cred) {
		ps.ss.revoked.Store(true)
		wb.end(ps)
		writeError(w, errWeb(http.StatusUnauthorized, "unauthenticated", "%s", proto.ErrorObjectOf(errRevoked).Message))
		return nil, false
	}
	got := r.Header.Get(webCSRFHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(ps.csrf)) != 1 {
		wb.refuse(w, r, errWeb(http.StatusForbidden, "forbidden", "the request lacks the page session's CSRF token (header %s)", webCSRFHeader),
			proto.ErrForbidden.Type, "token_name", ps.cred.Name)
		return nil, false
	}
	wb.mu.Lock()
	ps.used = now
	wb.mu.Unlock()
	return ps, true
}

// end ends ps and its wire session.
func (wb *web) end(ps *pageSession) {
	wb.mu.Lock()
	ended := wb.endLocked(ps)
	wb.mu.Unlock()
	if ended {
		wb.finish([]*pageSession{ps})
	}
}

// signInResult is what a sign-in and /api/session answer: who is signed in, and the
// CSRF token the page sends with each request.
type signInResult struct {
	Name string   `json:"name"`
	Role string   `json:"role"`
	Runs []string `json:"runs"`
	CSRF string   `json:"csrf"`
}

// serveSignIn checks the token of the body {"token": "..."} against the roles and
// signs an approver or an operator in: a cookie names the new page session. An
// unknown token is refused (401), an agent's too (403): the page decides, agents
// never do.
func (wb *web) serveSignIn(w http.ResponseWriter, r *http.Request) {
	body, ok := wb.post(w, r)
	if !ok {
		return
	}
	var token string
	sc := strictjson.New(body)
	err := sc.Object("the body", func(key string) error {
		if key != "token" {
			return sc.Errorf(`unknown field %q (the body is {"token": "..."})`, key)
		}
		return sc.String(`"token"`, &token)
	})
	if err == nil {
		err = sc.End("the body")
	}
	if err != nil {
		writeError(w, errWeb(http.StatusBadRequest, "invalid_request", `the body must be {"token": "..."}: %v`, err))
		return
	}
	if token == "" {
		writeError(w, errWeb(http.StatusUnauthorized, "unauthenticated", "no token given"))
		return
	}
	cred, ok := wb.s.lookup(token)
	if !ok {
		wb.refuse(w, r, errWeb(http.StatusUnauthorized, "unauthenticated", "unknown token"), proto.ErrUnauthenticated.Type)
		return
	}
	if cred.Role == proto.RoleAgent {
		wb.refuse(w, r, errWeb(http.StatusForbidden, "forbidden", "an agent's token cannot sign in: the page is for approvers (and operators, to read)"),
			proto.ErrForbidden.Type, "token_name", cred.Name)
		return
	}
	if old, err := r.Cookie(wb.cookie); err == nil {
		wb.mu.Lock()
		ps := wb.sessions[sha256.Sum256([]byte(old.Value))]
		wb.mu.Unlock()
		if ps != nil {
			wb.end(ps) // a sign-in replaces the browser's session
		}
	}
	id, ps, e := wb.signIn(cred, "page "+r.RemoteAddr)
	if e != nil {
		wb.refuse(w, r, e, proto.ErrOverloaded.Type, "token_name", cred.Name)
		return
	}
	wb.s.log.Info("page sign-in", "remote", r.RemoteAddr, "token_name", cred.Name, "role", cred.Role.String())
	http.SetCookie(w, &http.Cookie{Name: wb.cookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		MaxAge: int(webSessionLifetime / time.Second)})
	writeJSON(w, http.StatusOK, signInResult{Name: cred.Name, Role: cred.Role.String(), Runs: cred.Runs, CSRF: ps.csrf})
}

// serveSignOut ends the page session and clears its cookie.
func (wb *web) serveSignOut(w http.ResponseWriter, r *http.Request) {
	if _, ok := wb.post(w, r); !ok {
		return
	}
	ps, ok := wb.session(w, r)
	if !ok {
		return
	}
	wb.end(ps)
	wb.s.log.Info("page sign-out", "remote", r.RemoteAddr, "token_name", ps.cred.Name)
	http.SetCookie(w, &http.Cookie{Name: wb.cookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: -1})
	writeJSON(w, http.StatusOK, struct{}{})
}

// serveSession says who the page is signed in as (after a reload of the page, which
// keeps its CSRF token in sessionStorage).
func (wb *web) serveSession(w http.ResponseWriter, r *http.Request) {
	if e := checkOrigin(r, false); e != nil {
		wb.refuse(w, r, e, proto.ErrForbidden.Type)
		return
	}
	ps, ok := wb.session(w, r)
	if !ok {
		return
	}
	writeJSON(w, http.StatusOK, signInResult{Name: ps.cred.Name, Role: ps.cred.Role.String(), Runs: ps.cred.Runs, CSRF: ps.csrf})
}

// call hands one request of the page to its wire session, as the request line
// {"jsonrpc":"2.0","id":N,"method":method,"params":params}: the wire's decoder reads
// it and session.handle applies it, and its answer comes back once durable. params
// must be one JSON object (callers check it, so that it cannot end the envelope).
func (ps *pageSession) call(remote string, method proto.Method, params []byte) (proto.Response, error) {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	ss := ps.ss
	ss.remote = "page " + remote
	ps.seq++
	line := make([]byte, 0, len(params)+64)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = strconv.AppendInt(line, ps.seq, 10)
	line = append(line, `,"method":`...)
	line = strconv.AppendQuote(line, method.String())
	line = append(line, `,"params":`...)
	line = append(line, params...)
	line = append(line, '}')
	// As session.feed does for a line read from a connection.
	if err := ss.dec.Decode(line, &ss.req); err != nil {
		ss.push(answer{id: ss.req.ID, line: proto.AppendError(nil, ss.req.ID, err)})
	} else {
		ss.handle(&ss.req)
	}
	as := ss.take(nil)
	if len(as) != 1 { // handle answers every request but a waiting admit, which the page never sends
		return proto.Response{}, fmt.Errorf("soundgate/server: the page's %s got %d answers, not one", method, len(as))
	}
	out, _ := ss.s.release(nil, as)
	return proto.DecodeResponse(out)
}

// wireStatus is the HTTP status of a wire error: the page shows its message, a
// script can tell them apart.
func wireStatus(code int) int {
	switch {
	case code == proto.CodeUnauthenticated:
		return http.StatusUnauthorized
	case code == proto.CodeForbidden:
		return http.StatusForbidden
	case code == proto.CodeQuota:
		return http.StatusTooManyRequests
	case code == proto.CodeUnavailable || code == proto.CodeShuttingDown || code == proto.CodeOverloaded:
		return http.StatusServiceUnavailable
	case code >= proto.CodeCoreLast && code <= proto.CodeCoreFirst:
		return http.StatusConflict // the gate's state refuses it: not pending, unknown run, ...
	case code == proto.CodeInternal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest // the request: parse, envelope, params
}

// pageMethods are the wire methods the page calls, each at POST /api/METHOD with its
// params as the body.
var pageMethods = []proto.Method{proto.MethodPending, proto.MethodDecide}

// serveCall answers POST /api/METHOD: the body is the method's params, as on the
// wire; the answer is {"result": ...} or {"error": {"type", "message", "field"}}.
// A pending result also says how the page shows what agents wrote (pageApproval).
func (wb *web) serveCall(method proto.Method) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		body, ok := wb.post(w, r)
		if !ok {
			return
		}
		ps, ok := wb.session(w, r)
		if !ok {
			return
		}
		params := bytes.TrimSpace(body)
		var compact bytes.Buffer
		if !json.Valid(params) || params[0] != '{' || json.Compact(&compact, params) != nil {
			writeError(w, errWeb(http.StatusBadRequest, "invalid_request", "the body must be one JSON object: the params of %s (docs/protocol.md)", method))
			return
		}
		resp, err := ps.call(r.RemoteAddr, method, compact.Bytes())
		if err != nil {
			writeError(w, errWeb(http.StatusInternalServerError, "internal", "%v", err))
			return
		}
		if o := resp.Error; o != nil {
			if o.Type == proto.ErrUnauthenticated.Type { // a reload revoked it meanwhile
				wb.end(ps)
			}
			e := map[string]string{"type": o.Type, "message": o.Message}
			if o.Field != "" {
				e["field"] = o.Field
			}
			writeJSON(w, wireStatus(o.Code), map[string]any{"error": e})
			return
		}
		if method != proto.MethodPending {
			writeJSON(w, http.StatusOK, map[string]json.RawMessage{"result": resp.Result})
			return
		}
		var res proto.PendingResult
		if err := json.Unmarshal(resp.Result, &res); err != nil {
			writeError(w, errWeb(http.StatusInternalServerError, "internal", "the inbox's answer does not decode: %v", err))
			return
		}
		page := pageInbox{Approvals: []pageApproval{}, More: res.More, Cursor: res.Cursor}
		for _, a := range res.Approvals {
			page.Approvals = append(page.Approvals, pageApproval{Run: string(a.Run), Key: string(a.Key), SinceMs: int64(a.SinceMs), AgeMs: a.AgeMs,
				Description: a.Description, ArgsDigest: a.ArgsDigest, Shown: shownOf(string(a.Run), string(a.Key), a.Description, "")})
		}
		writeJSON(w, http.StatusOK, map[string]pageInbox{"result": page})
	}
}

// pageInbox is a page of the inbox as the page gets it.
type pageInbox struct {
	Approvals []pageApproval `json:"approvals"`
	More      bool           `json:"more"`
	Cursor    string         `json:"cursor,omitempty"`
}

// pageApproval is a pending approval as the page gets it: what the agent wrote as it
// is (to send back in a decide), and as the page shows it (Shown).
type pageApproval struct {
	Run         string `json:"run"`
	Key         string `json:"key"`
	SinceMs     int64  `json:"since_ms,omitempty"`
	AgeMs       int64  `json:"age_ms"`
	Description string `json:"description,omitempty"`
	ArgsDigest  string `json:"args_digest,omitempty"`
	Shown       shown  `json:"shown"`
}

// shown is what an agent or an approver wrote as the page shows it, written once for
// the page and the commands: proto.Shown for ids, proto.ShownText for texts. A
// control character, an escape sequence, a bidirectional override or an invisible
// character shows escaped, so no text can pass for another or hide; the page puts
// it into the document as text, never as markup.
type shown struct {
	Run         string `json:"run"`
	Key         string `json:"key"`
	Description string `json:"description,omitempty"`
	Reason      string `json:"reason,omitempty"`
}

func shownOf(run, key, description, reason string) shown {
	sh := shown{Run: proto.Shown(run), Key: proto.Shown(key)}
	if description != "" {
		sh.Description = proto.ShownText(description)
	}
	if reason != "" {
		sh.Reason = proto.ShownText(reason)
	}
	return sh
}
