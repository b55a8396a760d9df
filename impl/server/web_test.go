package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// Tests of the approvers' page's HTTP side (web.go): sign-in, the session cookie and
// CSRF token, what other origins are refused, the headers, decisions that are the
// wire's, the event stream, and what is never logged. The page in a real browser is
// ci/browser/approvers.test.mjs.

// page is one browser's view of the page: its cookie and CSRF token.
type page struct {
	t      *testing.T
	base   string // http://127.0.0.1:PORT
	cookie *http.Cookie
	csrf   string
}

// reply is an answer of the page's API.
type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

// errType is the error type of a refusal ("" for none).
func (r reply) errType() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["type"].(string)
	return s
}

func (r reply) errMessage() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

// result is the "result" member of an answer of /api/METHOD.
func (r reply) result() map[string]any {
	m, _ := r.body["result"].(map[string]any)
	return m
}

// req sends a request as the page's own script does (its Origin, its cookie and
// CSRF token, a JSON body) unless header overrides one ("Origin", "" drops it).
func (p *page) req(method, path, body string, header ...string) reply {
	p.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, p.base+path, rd)
	require.NoError(p.t, err)
	if method == http.MethodPost {
		req.Header.Set("Origin", p.base)
		req.Header.Set("Content-Type", "application/json")
	}
	if p.csrf != "" {
		req.Header.Set("X-Soundgate-Csrf", p.csrf)
	}
	if p.cookie != nil {
		req.AddCookie(p.cookie)
	}
	for i := 0; i+1 < len(header); i += 2 {
		if header[i+1] == "" {
			req.Header.Del(header[i])
			continue
		}
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(p.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(p.t, err)
	r := reply{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(p.t, json.Unmarshal(b, &r.body), string(b))
	}
	return r
}

// signIn signs the page in with token and keeps its cookie and CSRF token.
func (p *page) signIn(token string) reply {
	p.t.Helper()
	body, _ := json.Marshal(map[string]string{"token": token})
	r := p.req(http.MethodPost, "/api/signin", string(body))
	if r.status == http.StatusOK {
		cs := (&http.Response{Header: r.header}).Cookies()
		require.Len(p.t, cs, 1)
		p.cookie = cs[0]
		p.csrf, _ = r.body["csrf"].(string)
	}
	return r
}

func newPage(t *testing.T, g *servertest.Gate) *page { return &page{t: t, base: g.HTTP} }

// pageGate starts a gate with the HTTP listener and the inbox's roles (an approver
// of every run, alice, and one of team-a-* only, bob), and opens runs.
func pageGate(t *testing.T, logger *slog.Logger, runs ...string) *servertest.Gate {
	t.Helper()
	g := servertest.Start(t, servertest.Options{Roles: inboxRoles(t), HTTP: true, Logger: logger})
	op := g.Dial(t, servertest.OperatorToken)
	for _, r := range runs {
		_, err := op.Open(context.Background(), r, 0)
		require.NoError(t, err)
	}
	return g
}

// held admits key of run gated, with description, and checks that it is held.
func held(t *testing.T, agent *client.Client, run, key, description string) {
	t.Helper()
	res, err := agent.Admit(context.Background(), run, key, 1, client.AdmitOptions{Gated: true, Description: description})
	require.NoError(t, err)
	require.Equal(t, core.AnswerHeld, res.Answer)
}

// TestPageSignIn: an approver's token in a POST's JSON body signs in, and the answer
// sets a session cookie of 256 random bits that scripts cannot read and other sites
// do not send; a missing, empty or unknown token is refused (401), an agent's too
// (403), and so is a body that is not the JSON object it should be; none of them
// sets a cookie.
func TestPageSignIn(t *testing.T) {
	g := pageGate(t, nil)
	p := newPage(t, g)
	r := p.signIn(servertest.ApproverToken)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, "alice", r.body["name"])
	require.Equal(t, "approver", r.body["role"])
	require.Regexp(t, `^[A-Za-z0-9_-]{43}$`, p.csrf, "32 random bytes, base64url")
	c := p.cookie
	require.Regexp(t, `^[A-Za-z0-9_-]{43}$`, c.Value)
	require.NotEqual(t, c.Value, p.csrf)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.Equal(t, "/", c.Path)
	require.True(t, strings.HasPrefix(c.Name, "soundgate-session-"), c.Name)
	second := newPage(t, g)
	second.signIn(servertest.ApproverToken)
	require.NotEqual(t, c.Value, second.cookie.Value, "each sign-in has its own id")

	before := g.Server.Refusals()
	for _, tc := range []struct {
		name, body string
		header     []string
		status     int
		typ, says  string
	}{
		{"no token", `{}`, nil, http.StatusUnauthorized, "unauthenticated", "no token"},
		{"empty token", `{"token": ""}`, nil, http.StatusUnauthorized, "unauthenticated", "no token"},
		{"unknown token", `{"token": "not-a-token-0123456789abcdefghijk"}`, nil, http.StatusUnauthorized, "unauthenticated", "unknown token"},
		{"agent token", `{"token": "` + servertest.AgentToken + `"}`, nil, http.StatusForbidden, "forbidden", "agent"},
		{"unknown field", `{"token": "` + servertest.ApproverToken + `", "role": "operator"}`, nil, http.StatusBadRequest, "invalid_request", `unknown field "role"`},
		{"token twice", `{"token": "x", "token": "` + servertest.ApproverToken + `"}`, nil, http.StatusBadRequest, "invalid_request", "twice"},
		{"not JSON", `token=` + servertest.ApproverToken, nil, http.StatusBadRequest, "invalid_request", "not JSON"},
		{"a form", `token=` + servertest.ApproverToken, []string{"Content-Type", "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "invalid_request", "JSON"},
		{"no origin", `{"token": "` + servertest.ApproverToken + `"}`, []string{"Origin", ""}, http.StatusForbidden, "forbidden", "Origin"},
		{"another origin", `{"token": "` + servertest.ApproverToken + `"}`, []string{"Origin", "http://attacker.example"}, http.StatusForbidden, "forbidden", "cross-origin"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := newPage(t, g)
			r := q.req(http.MethodPost, "/api/signin", tc.body, tc.header...)
			require.Equal(t, tc.status, r.status, r.raw)
			require.Equal(t, tc.typ, r.errType(), r.raw)
			require.Contains(t, r.errMessage(), tc.says)
			require.Empty(t, r.header.Values("Set-Cookie"))
		})
	}
	after := g.Server.Refusals()
	require.Equal(t, before["unauthenticated"]+1, after["unauthenticated"], "the unknown token is counted as the wire counts a hello's")
	require.Equal(t, before["forbidden"]+3, after["forbidden"], "the agent's token and the two foreign origins")

	// The token is checked, not the cookie's name: a cookie of the page's name but an
	// id the gate never gave is no session.
	forged := newPage(t, g)
	forged.cookie, forged.csrf = &http.Cookie{Name: c.Name, Value: strings.Repeat("A", 43)}, p.csrf
	r = forged.req(http.MethodPost, "/api/pending", `{}`)
	require.Equal(t, http.StatusUnauthorized, r.status, r.raw)
}

// TestPageRefusesForeignRequests: a signed-in page's request without the cookie,
// without or with a wrong CSRF token (another session's included), from another
// origin, or that is not a POST of JSON, is refused and changes nothing; the same
// request with them all is served (the control).
func TestPageRefusesForeignRequests(t *testing.T) {
	g := pageGate(t, nil, "team-a-1")
	held(t, g.Dial(t, servertest.AgentToken), "team-a-1", "pay", "")
	p := newPage(t, g)
	require.Equal(t, http.StatusOK, p.signIn(servertest.ApproverToken).status)
	other := newPage(t, g)
	require.Equal(t, http.StatusOK, other.signIn(servertest.ApproverToken).status)
	decide := `{"run": "team-a-1", "key": "pay", "decision": "approve"}`
	for _, tc := range []struct {
		name   string
		mutate func(q *page)
		header []string
		status int
	}{
		{"no cookie", func(q *page) { q.cookie = nil }, nil, http.StatusUnauthorized},
		{"no CSRF token", func(q *page) { q.csrf = "" }, nil, http.StatusForbidden},
		{"a wrong CSRF token", func(q *page) { q.csrf = strings.Repeat("x", 43) }, nil, http.StatusForbidden},
		{"another session's CSRF token", func(q *page) { q.csrf = other.csrf }, nil, http.StatusForbidden},
		{"another origin", nil, []string{"Origin", "http://attacker.example"}, http.StatusForbidden},
		{"another port of the host", nil, []string{"Origin", "http://127.0.0.1:1"}, http.StatusForbidden},
		{"no origin", nil, []string{"Origin", ""}, http.StatusForbidden},
		{"a cross-site fetch", nil, []string{"Sec-Fetch-Site", "cross-site"}, http.StatusForbidden},
		{"a form", nil, []string{"Content-Type", "text/plain"}, http.StatusUnsupportedMediaType},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := *p
			q.t = t
			if tc.mutate != nil {
				tc.mutate(&q)
			}
			r := q.req(http.MethodPost, "/api/decide", decide, tc.header...)
			require.Equal(t, tc.status, r.status, r.raw)
			require.NotEmpty(t, r.errType(), r.raw)
		})
	}
	r := p.req(http.MethodGet, "/api/decide", "")
	require.Equal(t, http.StatusMethodNotAllowed, r.status)
	st, err := g.Dial(t, servertest.OperatorToken).Status(context.Background(), "team-a-1", "")
	require.NoError(t, err)
	require.Equal(t, []core.Key{"pay"}, st.Pending, "no refused request decided")

	r = p.req(http.MethodPost, "/api/decide", decide)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, map[string]any{"decision": "approve", "repeat": false}, r.result())
}

// TestPageSignOut: a signed-out session's cookie and CSRF token are worth nothing,
// its open stream ends saying so, and the answer clears the cookie.
func TestPageSignOut(t *testing.T) {
	g := pageGate(t, nil)
	p := newPage(t, g)
	require.Equal(t, http.StatusOK, p.signIn(servertest.ApproverToken).status)
	s := openStream(t, p)
	require.Equal(t, "ready", s.next(t).event)
	r := p.req(http.MethodPost, "/api/signout", `{}`)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	cs := (&http.Response{Header: r.header}).Cookies()
	require.Len(t, cs, 1)
	require.Equal(t, p.cookie.Name, cs[0].Name)
	require.Less(t, cs[0].MaxAge, 0, "the cookie is cleared")
	ev := s.next(t)
	require.Equal(t, "end", ev.event)
	require.Equal(t, true, ev.data["session_ended"])
	for _, path := range []string{"/api/pending", "/api/signout"} {
		r = p.req(http.MethodPost, path, `{}`)
		require.Equal(t, http.StatusUnauthorized, r.status, path)
	}
	r = p.req(http.MethodGet, "/api/session", "")
	require.Equal(t, http.StatusUnauthorized, r.status)
}

// TestPageHeaders: every answer of the listener, the page's files, its API's
// refusals, /metrics and a 404 alike, carries the content security policy and the
// other security headers; the page's HTML has no inline script, style or handler
// for the policy to forbid, and its script writes no markup.
func TestPageHeaders(t *testing.T) {
	g := pageGate(t, nil)
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
		"X-Frame-Options":         "DENY",
	}
	p := newPage(t, g)
	files := map[string]string{}
	for _, c := range []struct {
		method, path string
		status       int
		ctype        string
	}{
		{http.MethodGet, "/", http.StatusOK, "text/html; charset=utf-8"},
		{http.MethodGet, "/app.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{http.MethodGet, "/app.css", http.StatusOK, "text/css; charset=utf-8"},
		{http.MethodPost, "/api/signin", http.StatusBadRequest, "application/json; charset=utf-8"},
		{http.MethodGet, "/api/session", http.StatusUnauthorized, "application/json; charset=utf-8"},
		{http.MethodGet, "/metrics", http.StatusOK, "text/plain; version=0.0.4; charset=utf-8"},
		{http.MethodGet, "/healthz", http.StatusOK, "text/plain; charset=utf-8"},
		{http.MethodGet, "/index.html", http.StatusNotFound, "text/plain; charset=utf-8"},
	} {
		r := p.req(c.method, c.path, map[bool]string{true: "{", false: ""}[c.method == http.MethodPost])
		require.Equal(t, c.status, r.status, c.path)
		require.Equal(t, c.ctype, r.header.Get("Content-Type"), c.path)
		for k, v := range want {
			require.Equal(t, v, r.header.Get(k), "%s of %s", k, c.path)
		}
		files[c.path] = r.raw
	}
	html := files["/"]
	require.Contains(t, html, `<script src="/app.js" defer></script>`)
	require.NotRegexp(t, `<script[^>]*>[^<]`, html, "no inline script")
	require.NotRegexp(t, `(?i)<style|\sstyle=`, html, "no inline style")
	require.NotRegexp(t, `(?i)\son[a-z]+=`, html, "no inline handler")
	require.NotRegexp(t, `https?://`, html+files["/app.js"]+files["/app.css"], "nothing from elsewhere")
	require.NotRegexp(t, `innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function`, files["/app.js"],
		"the page's script puts text into the document, never markup")
}

// wireError is what the wire answers a request of token: its error's type and message.
func wireError(t *testing.T, g *servertest.Gate, token string, call func(c *client.Client) error) (typ, msg string) {
	t.Helper()
	err := call(g.Dial(t, token))
	var ce *client.Error
	require.True(t, errors.As(err, &ce), "the wire refuses it: %v", err)
	return ce.Object.Type, ce.Object.Message
}

// TestPageDecidesAsTheWire: the page's decisions and listings are the wire's, with
// the same checks and the same answers: an approver of team-a-* lists and decides
// team-a-1's approval, not team-b-1's (forbidden, as on the wire), an operator
// decides nothing, a bad decision is the decoder's error, and what was decided
// (with its reason) is what the wire sees.
func TestPageDecidesAsTheWire(t *testing.T) {
	g := pageGate(t, nil, "team-a-1", "team-b-1")
	ctx := context.Background()
	agent := g.Dial(t, servertest.AgentToken)
	held(t, agent, "team-a-1", "pay", "Wire 120 EUR")
	held(t, agent, "team-b-1", "mail", "")

	bob := newPage(t, g)
	require.Equal(t, http.StatusOK, bob.signIn(scopedApproverToken).status)
	r := bob.req(http.MethodPost, "/api/pending", `{}`)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	approvals := r.result()["approvals"].([]any)
	require.Len(t, approvals, 1, "bob's scope: team-a-* only")
	a := approvals[0].(map[string]any)
	require.Equal(t, "team-a-1", a["run"])
	require.Equal(t, "pay", a["key"])
	require.Equal(t, "Wire 120 EUR", a["description"])

	wantType, wantMsg := wireError(t, g, scopedApproverToken, func(c *client.Client) error {
		_, err := c.Decide(ctx, "team-b-1", "mail", core.Approve)
		return err
	})
	r = bob.req(http.MethodPost, "/api/decide", `{"run": "team-b-1", "key": "mail", "decision": "approve"}`)
	require.Equal(t, http.StatusForbidden, r.status, r.raw)
	require.Equal(t, wantType, r.errType())
	require.Equal(t, wantMsg, r.errMessage())

	ops := newPage(t, g)
	require.Equal(t, http.StatusOK, ops.signIn(servertest.OperatorToken).status)
	wantType, wantMsg = wireError(t, g, servertest.OperatorToken, func(c *client.Client) error {
		_, err := c.Decide(ctx, "team-a-1", "pay", core.Approve)
		return err
	})
	r = ops.req(http.MethodPost, "/api/decide", `{"run": "team-a-1", "key": "pay", "decision": "approve"}`)
	require.Equal(t, http.StatusForbidden, r.status, r.raw)
	require.Equal(t, wantType, r.errType())
	require.Equal(t, wantMsg, r.errMessage())

	for _, c := range []struct{ body, typ, field string }{
		{`{"run": "team-a-1", "key": "pay", "decision": "maybe"}`, "out_of_range", "params.decision"},
		{`{"run": "team-a-1", "key": "pay"}`, "missing_field", "params.decision"},
		{`{"run": "team-a-1", "key": "pay", "decision": "approve", "epoch": 1}`, "unknown_field", "params.epoch"},
		{`{"run": "team-a-1", "key": "pay", "key": "x", "decision": "approve"}`, "duplicate_key", ""},
		{`["team-a-1"]`, "invalid_request", ""},
		{`{"run": "team-a-1"}} , {"method": "cancel"`, "invalid_request", ""},
	} {
		r = bob.req(http.MethodPost, "/api/decide", c.body)
		require.Equal(t, http.StatusBadRequest, r.status, c.body)
		require.Equal(t, c.typ, r.errType(), c.body)
		if c.field != "" {
			require.Equal(t, c.field, r.body["error"].(map[string]any)["field"], c.body)
		}
	}

	r = bob.req(http.MethodPost, "/api/decide", `{"run": "team-a-1", "key": "pay", "decision": "reject", "reason": "not this month"}`)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.Equal(t, map[string]any{"decision": "reject", "repeat": false}, r.result())
	st, err := g.Dial(t, servertest.OperatorToken).Status(ctx, "team-a-1", "pay")
	require.NoError(t, err)
	require.Equal(t, core.EffectRejected, st.Effect.Status)
	require.Equal(t, "not this month", st.Effect.Reason)
	r = bob.req(http.MethodPost, "/api/decide", `{"run": "team-a-1", "key": "pay", "decision": "reject"}`)
	require.Equal(t, map[string]any{"decision": "reject", "repeat": true}, r.result(), "a repeat, as on the wire")
	wantType, wantMsg = wireError(t, g, scopedApproverToken, func(c *client.Client) error {
		_, err := c.Decide(ctx, "team-a-1", "pay", core.Approve)
		return err
	})
	r = bob.req(http.MethodPost, "/api/decide", `{"run": "team-a-1", "key": "pay", "decision": "approve"}`)
	require.Equal(t, http.StatusConflict, r.status, r.raw)
	require.Equal(t, wantType, r.errType())
	require.Equal(t, wantMsg, r.errMessage())
}

// sse is an open event stream of the page.
type sse struct {
	resp   *http.Response
	events chan sseEvent
}

// sseEvent is one event of a stream; event "" with a nil data is the stream's end.
type sseEvent struct {
	event string
	data  map[string]any
}

// openStream opens /api/events as the page's script does and reads its events.
func openStream(t *testing.T, p *page) *sse {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.base+"/api/events", nil)
	require.NoError(t, err)
	req.Header.Set("X-Soundgate-Csrf", p.csrf)
	req.AddCookie(p.cookie)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream; charset=utf-8", resp.Header.Get("Content-Type"))
	s := &sse{resp: resp, events: make(chan sseEvent, 64)}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &ev.data); err != nil {
					ev.event = "bad data: " + line
				}
			}
		}
	}()
	return s
}

// next is the stream's next event, within 5 s.
func (s *sse) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		require.True(t, ok, "the stream ended")
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// TestPageEvents: the stream says it is ready, then each change of the inbox in the
// token's scope, once durable, with what the agent and the approver wrote; a change
// of a run outside the scope never reaches it.
func TestPageEvents(t *testing.T) {
	g := pageGate(t, nil, "team-a-1", "team-b-1")
	ctx := context.Background()
	bob := newPage(t, g)
	require.Equal(t, http.StatusOK, bob.signIn(scopedApproverToken).status)
	s := openStream(t, bob)
	require.Equal(t, "ready", s.next(t).event)

	agent := g.Dial(t, servertest.AgentToken)
	held(t, agent, "team-b-1", "mail", "outside bob's scope")
	held(t, agent, "team-a-1", "pay", "Wire 120 EUR")
	ev := s.next(t)
	require.Equal(t, "inbox", ev.event)
	require.Equal(t, "pending", ev.data["kind"])
	require.Equal(t, "team-a-1", ev.data["run"], "team-b-1's approval is not bob's to see")
	require.Equal(t, "pay", ev.data["key"])
	require.Equal(t, "Wire 120 EUR", ev.data["description"])
	require.Equal(t, map[string]any{"run": "team-a-1", "key": "pay", "description": "Wire 120 EUR"}, ev.data["shown"])

	alice := g.Dial(t, servertest.ApproverToken)
	_, err := alice.DecideWith(ctx, "team-b-1", "mail", core.Approve, client.DecideOptions{})
	require.NoError(t, err)
	_, err = alice.DecideWith(ctx, "team-a-1", "pay", core.Approve, client.DecideOptions{Reason: "invoice checked"})
	require.NoError(t, err)
	ev = s.next(t)
	require.Equal(t, "approved", ev.data["kind"])
	require.Equal(t, "pay", ev.data["key"])
	require.Equal(t, "invoice checked", ev.data["reason"])
}

// TestPageShowsAgentTextInert: what an agent wrote (markup, escape sequences, control
// and invisible characters) reaches the page as it is, to decide with, and as the
// commands show it (proto.Shown, proto.ShownText), to show; the JSON of the answers
// holds no raw markup character.
func TestPageShowsAgentTextInert(t *testing.T) {
	g := pageGate(t, nil, "r")
	markup, escape := `<img src=x onerror=alert(1)>`, "\x1b[31mred\x1b[0m\a"
	description := "<script>alert(2)</script> \u202egnp.exe\x1b]0;title\a"
	_, err := g.Dial(t, servertest.AgentToken).Admit(context.Background(), "r", markup, 1, client.AdmitOptions{Gated: true, Description: "plain"})
	require.NoError(t, err)
	p := newPage(t, g)
	require.Equal(t, http.StatusOK, p.signIn(servertest.ApproverToken).status)
	s := openStream(t, p)
	require.Equal(t, "ready", s.next(t).event)
	_, err = g.Dial(t, servertest.AgentToken).Admit(context.Background(), "r", escape, 1, client.AdmitOptions{Gated: true, Description: description})
	var ce *client.Error
	require.ErrorAs(t, err, &ce, "a description with control characters is refused (core.CheckNoteText)")
	require.Equal(t, proto.ErrOutOfRange.Type, ce.Object.Type)
	_, err = g.Dial(t, servertest.AgentToken).Admit(context.Background(), "r", escape, 1, client.AdmitOptions{Gated: true, Description: "<script>alert(2)</script> \u202egnp.exe"})
	require.NoError(t, err)

	ev := s.next(t)
	require.Equal(t, escape, ev.data["key"])
	require.Equal(t, map[string]any{"run": "r", "key": `"\x1b[31mred\x1b[0m\a"`, "description": `"<script>alert(2)</script> \u202egnp.exe"`}, ev.data["shown"])
	r := p.req(http.MethodPost, "/api/pending", `{}`)
	require.Equal(t, http.StatusOK, r.status, r.raw)
	require.NotContains(t, r.raw, "<", "encoding/json escapes markup characters")
	var keys, shownKeys []string
	for _, a := range r.result()["approvals"].([]any) {
		a := a.(map[string]any)
		keys = append(keys, a["key"].(string))
		sh := a["shown"].(map[string]any)
		shownKeys = append(shownKeys, sh["key"].(string))
		require.Equal(t, proto.Shown(a["key"].(string)), sh["key"])
		require.Equal(t, proto.ShownText(a["description"].(string)), sh["description"])
	}
	require.ElementsMatch(t, []string{markup, escape}, keys)
	require.ElementsMatch(t, []string{`"<img src=x onerror=alert(1)>"`, `"\x1b[31mred\x1b[0m\a"`}, shownKeys)
}

// TestPageRolesReload: a reload of the roles that removes or changes a token ends
// its page sessions, their streams included; one that keeps it as it was keeps them.
func TestPageRolesReload(t *testing.T) {
	g := pageGate(t, nil)
	alice, bob := newPage(t, g), newPage(t, g)
	require.Equal(t, http.StatusOK, alice.signIn(servertest.ApproverToken).status)
	require.Equal(t, http.StatusOK, bob.signIn(scopedApproverToken).status)
	bs := openStream(t, bob)
	require.Equal(t, "ready", bs.next(t).event)
	// bob's runs change: his credential is not the one he signed in with.
	rs, err := server.ParseRoles([]byte(`{"tokens": [
  {"name": "agent", "token": "`+servertest.AgentToken+`", "role": "agent", "runs": ["*"]},
  {"name": "alice", "token": "`+servertest.ApproverToken+`", "role": "approver", "runs": ["*"]},
  {"name": "bob", "token": "`+scopedApproverToken+`", "role": "approver", "runs": ["team-b-*"]}
]}`), server.RolesOptions{})
	require.NoError(t, err)
	_, err = g.Server.SetRoles(rs)
	require.NoError(t, err)
	ev := bs.next(t)
	require.Equal(t, "end", ev.event)
	require.Equal(t, true, ev.data["session_ended"])
	require.Contains(t, ev.data["why"], "reloaded")
	r := bob.req(http.MethodPost, "/api/pending", `{}`)
	require.Equal(t, http.StatusUnauthorized, r.status, r.raw)
	r = alice.req(http.MethodPost, "/api/pending", `{}`)
	require.Equal(t, http.StatusOK, r.status, "alice's token is as it was")
	require.Equal(t, http.StatusOK, bob.signIn(scopedApproverToken).status, "bob signs in again, with his new runs")
}

// TestPageStreamLimits: a session holds at most 4 streams; one more is refused.
func TestPageStreamLimits(t *testing.T) {
	g := pageGate(t, nil)
	p := newPage(t, g)
	require.Equal(t, http.StatusOK, p.signIn(servertest.ApproverToken).status)
	for range 4 {
		require.Equal(t, "ready", openStream(t, p).next(t).event)
	}
	r := p.req(http.MethodGet, "/api/events", "")
	require.Equal(t, http.StatusServiceUnavailable, r.status, r.raw)
	require.Equal(t, "overloaded", r.errType())
}

// TestPageSessionsPerToken: a token's 17th sign-in ends its least recently used
// page session, not another token's.
func TestPageSessionsPerToken(t *testing.T) {
	g := pageGate(t, nil)
	bob := newPage(t, g)
	require.Equal(t, http.StatusOK, bob.signIn(scopedApproverToken).status)
	var pages []*page
	for range 16 {
		p := newPage(t, g)
		require.Equal(t, http.StatusOK, p.signIn(servertest.ApproverToken).status)
		pages = append(pages, p)
	}
	for _, p := range pages[1:] {
		require.Equal(t, http.StatusOK, p.req(http.MethodPost, "/api/pending", `{}`).status)
	}
	last := newPage(t, g)
	require.Equal(t, http.StatusOK, last.signIn(servertest.ApproverToken).status)
	require.Equal(t, http.StatusUnauthorized, pages[0].req(http.MethodPost, "/api/pending", `{}`).status, "the least recently used")
	for _, p := range append(pages[1:], last, bob) {
		require.Equal(t, http.StatusOK, p.req(http.MethodPost, "/api/pending", `{}`).status)
	}
}

// syncBuffer is a log sink that tests read while the server writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestPageLogsNoSecret: signing in, refusals, decisions and signing out are logged
// (at the debug level, the most there is) by the token's name, and no token, session
// id or CSRF token appears in the log.
func TestPageLogsNoSecret(t *testing.T) {
	var logged syncBuffer
	logger := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g := pageGate(t, logger, "r")
	held(t, g.Dial(t, servertest.AgentToken), "r", "pay", "")
	unknown := "unknown-token-0123456789abcdefghij"
	secrets := []string{servertest.ApproverToken, servertest.AgentToken, unknown, scopedApproverToken}

	newPage(t, g).signIn(unknown)
	newPage(t, g).signIn(servertest.AgentToken)
	p := newPage(t, g)
	require.Equal(t, http.StatusOK, p.signIn(servertest.ApproverToken).status)
	secrets = append(secrets, p.cookie.Value, p.csrf)
	bob := newPage(t, g)
	require.Equal(t, http.StatusOK, bob.signIn(scopedApproverToken).status)
	secrets = append(secrets, bob.cookie.Value, bob.csrf)
	r := bob.req(http.MethodPost, "/api/decide", `{"run": "r", "key": "pay", "decision": "approve"}`)
	require.Equal(t, http.StatusForbidden, r.status, "r is outside bob's scope")
	r = p.req(http.MethodPost, "/api/decide", `{"run": "r", "key": "pay", "decision": "approve"}`, "X-Soundgate-Csrf", bob.csrf)
	require.Equal(t, http.StatusForbidden, r.status)
	r = p.req(http.MethodPost, "/api/decide", `{"run": "r", "key": "pay", "decision": "approve"}`)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, http.StatusOK, p.req(http.MethodPost, "/api/signout", `{}`).status)

	out := logged.String()
	for _, want := range []string{"refusal=unauthenticated", "token_name=agent", "page sign-in", "token_name=alice", "token_name=bob", "page sign-out"} {
		require.Contains(t, out, want, "the log tells what happened")
	}
	for _, secret := range secrets {
		require.NotContains(t, out, secret)
	}
	require.NotRegexp(t, regexp.MustCompile(`[A-Za-z0-9_-]{43}`), out, "no session id or CSRF token, whatever its session")
}
