package egress

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// Limits of the proxy.
const (
	// BodyBytesMax bounds a forwarded request body (it is read whole to derive the key).
	BodyBytesMax = 32 << 20
	// HeaderBytesMax bounds the request header block.
	HeaderBytesMax = 64 << 10
	// DefaultHeldWaitMax is how long a request waits while its effect is held.
	DefaultHeldWaitMax = 10 * time.Minute
	// askIntervalMax bounds the pause between two asks of a held effect.
	askIntervalMax = time.Second
	// askIntervalMin is the first pause between two asks of a held effect.
	askIntervalMin = 20 * time.Millisecond
	// dialTimeout bounds the dial to an upstream host.
	dialTimeout = 15 * time.Second
	// readHeaderTimeout bounds the reading of a request header from the agent.
	readHeaderTimeout = 30 * time.Second
	// sequencesMax bounds the distinct derived-key prefixes the proxy remembers.
	sequencesMax = 1 << 16
)

// Header names the proxy reads (and strips) or writes.
const (
	HeaderRun     = "Soundgate-Run"
	HeaderKey     = "Soundgate-Key"
	HeaderVerdict = "Soundgate-Verdict"
)

// Verdict is the gate's answer to one Admit.
type Verdict struct {
	Answer core.Answer
	Reason core.Reason // set when Answer is core.AnswerDenied
}

// Admitter is the gate as the proxy sees it.
type Admitter interface {
	// Admit asks the gate whether effect (run, key) may happen now. It may wait a
	// while for a pending decision; it answers core.AnswerHeld if still held.
	Admit(ctx context.Context, run core.RunID, key core.Key) (Verdict, error)
	// Complete reports what became of an admitted effect.
	Complete(ctx context.Context, run core.RunID, key core.Key, o core.Outcome, result string) error
}

// Event is one line of the proxy's log: a request and what the gate answered.
type Event struct {
	Time   time.Time
	Run    core.RunID
	Key    core.Key
	Method string
	Target string
	// Answer is the gate's last answer (0 if the gate could not be asked).
	Answer core.Answer
	Reason core.Reason
	// Status is the HTTP status the agent got (for CONNECT, 200 once the tunnel opened).
	Status int
	// Err says why a request failed or was refused, if it was.
	Err string
}

// String formats e as one log line; what the agent chose is shown as proto.Shown
// shows it, so that it can neither forge a line of the log nor hide itself.
func (e Event) String() string {
	s := fmt.Sprintf("egress run=%s key=%q %s %s answer=%s", proto.Shown(string(e.Run)), e.Key, proto.Shown(e.Method), proto.Shown(e.Target), e.Answer)
	if e.Reason != core.ReasonNone {
		s += " reason=" + e.Reason.String()
	}
	s += fmt.Sprintf(" status=%d", e.Status)
	if e.Err != "" {
		s += fmt.Sprintf(" err=%q", e.Err)
	}
	return s
}

// Proxy is the egress proxy; it is an http.Handler. The zero value is not usable:
// Admitter must be set.
type Proxy struct {
	// Admitter is the gate.
	Admitter Admitter
	// Run is the run of requests without a Soundgate-Run header.
	Run core.RunID
	// Log receives one Event per request (nil: none).
	Log func(Event)
	// Transport forwards absolute-URI requests (nil: a transport that dials directly).
	Transport http.RoundTripper
	// Dial opens CONNECT tunnels (nil: net.Dialer with dialTimeout).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// HeldWaitMax is how long a held request waits (0: DefaultHeldWaitMax).
	HeldWaitMax time.Duration

	mu   sync.Mutex
	seq  map[string]int
	tr   *http.Transport
	once sync.Once
}

// ErrSequences: the proxy has derived keys for sequencesMax distinct requests and
// refuses to derive more (give requests a Soundgate-Key header).
var ErrSequences = errors.New("soundgate/egress: limit reached: derived key sequences")

// ErrOtherRun: a request of a proxy with a run (Proxy.Run) named another run.
var ErrOtherRun = errors.New("soundgate/egress: a request named another run")

// Serve answers proxy requests on l until l is closed.
func (p *Proxy) Serve(l net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: readHeaderTimeout, MaxHeaderBytes: HeaderBytesMax}
	err := srv.Serve(l)
	if errors.Is(err, net.ErrClosed) || errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func (p *Proxy) transport() http.RoundTripper {
	if p.Transport != nil {
		return p.Transport
	}
	p.once.Do(func() {
		p.tr = &http.Transport{Proxy: nil, DialContext: p.dial, MaxIdleConns: 16,
			IdleConnTimeout: 30 * time.Second, ResponseHeaderTimeout: 5 * time.Minute}
	})
	return p.tr
}

func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, network, addr)
	}
	d := net.Dialer{Timeout: dialTimeout}
	return d.DialContext(ctx, network, addr)
}

// Key derives the key of a request without a Soundgate-Key header: method, host and
// a digest of the method, full target and body, then "#n" for the n-th such request
// seen by this proxy (from 1).
func (p *Proxy) Key(method, target string, body []byte) (core.Key, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%d\n", method, target, len(body))
	h.Write(body)
	host := target
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	base := fmt.Sprintf("%s %s %s", method, host, hex.EncodeToString(h.Sum(nil))[:24])
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seq == nil {
		p.seq = make(map[string]int)
	}
	n, ok := p.seq[base]
	if !ok && len(p.seq) >= sequencesMax {
		return "", ErrSequences
	}
	p.seq[base] = n + 1
	return core.Key(fmt.Sprintf("%s #%d", base, n+1)), nil
}

// ServeHTTP handles one proxy request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ev := Event{Time: time.Now(), Method: r.Method}
	defer func() {
		if p.Log != nil {
			p.Log(ev)
		}
	}()
	switch {
	case r.Method == http.MethodConnect:
		ev.Target = r.Host
		p.connect(w, r, &ev)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		ev.Target = r.URL.String()
		p.forward(w, r, &ev)
	default:
		ev.Target = r.RequestURI
		refuse(w, &ev, http.StatusBadRequest, "bad-request",
			"not a proxy request: send an absolute http:// URI, or CONNECT host:port for https")
	}
}

// refuse answers the agent with status and a body that says why.
func refuse(w http.ResponseWriter, ev *Event, status int, verdict, why string) {
	ev.Status, ev.Err = status, why
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set(HeaderVerdict, verdict)
	w.Header().Set("Connection", "close")
	w.WriteHeader(status)
	fmt.Fprintf(w, "soundgate: %s\n", why)
}

func refuseRunKey(w http.ResponseWriter, ev *Event, err error) {
	if errors.Is(err, ErrOtherRun) {
		refuse(w, ev, http.StatusForbidden, "other-run", err.Error()+"; nothing was sent")
		return
	}
	refuse(w, ev, http.StatusBadRequest, "bad-request", err.Error())
}

// runKey returns the effect's run and key, from the headers or derived.
func (p *Proxy) runKey(r *http.Request, target string, body []byte) (core.RunID, core.Key, error) {
	run := core.RunID(r.Header.Get(HeaderRun))
	switch {
	case p.Run != "" && run != "" && run != p.Run:
		// The agent may not move its effects to another run (one that is not paused,
		// say): a proxy with a run serves that run only.
		return "", "", fmt.Errorf("%w: the request names run %q, this proxy serves run %q", ErrOtherRun, run, p.Run)
	case run == "":
		run = p.Run
	}
	if run == "" {
		return "", "", errors.New("no run: set the Soundgate-Run header or start the proxy with a run")
	}
	if k := r.Header.Get(HeaderKey); k != "" {
		return run, core.Key(k), nil
	}
	k, err := p.Key(r.Method, target, body)
	return run, k, err
}

// admit asks the gate until the answer is not held (or the wait runs out) and
// reports whether the request may be forwarded; if not, it has answered the agent.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, ev *Event) bool {
	wait := p.HeldWaitMax
	if wait <= 0 {
		wait = DefaultHeldWaitMax
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	pause := askIntervalMin
	for {
		v, err := p.Admitter.Admit(ctx, ev.Run, ev.Key)
		if err != nil && ctx.Err() == nil {
			refuse(w, ev, http.StatusBadGateway, "error", fmt.Sprintf("the gate could not be asked for run %s key %q: %v; nothing was sent", ev.Run, ev.Key, err))
			return false
		}
		if err == nil {
			ev.Answer, ev.Reason = v.Answer, v.Reason
			switch v.Answer {
			case core.AnswerAdmit:
				return true
			case core.AnswerDuplicate:
				refuse(w, ev, http.StatusConflict, "duplicate", fmt.Sprintf("run %s key %q was already admitted (duplicate); not sent again", ev.Run, ev.Key))
				return false
			case core.AnswerDenied:
				refuse(w, ev, http.StatusForbidden, "denied; reason="+v.Reason.String(), fmt.Sprintf("run %s key %q denied (%s); nothing was sent", ev.Run, ev.Key, v.Reason))
				return false
			case core.AnswerHeld:
			default:
				refuse(w, ev, http.StatusBadGateway, "error", fmt.Sprintf("the gate gave an unknown answer %d; nothing was sent", v.Answer))
				return false
			}
		}
		select {
		case <-ctx.Done():
			if r.Context().Err() != nil {
				ev.Err = "the agent went away while the effect was held"
				return false
			}
			ev.Answer = core.AnswerHeld
			refuse(w, ev, http.StatusGatewayTimeout, "held", fmt.Sprintf("run %s key %q is still held (approval pending) after %v; nothing was sent", ev.Run, ev.Key, wait))
			return false
		case <-time.After(pause):
		}
		if pause *= 2; pause > askIntervalMax {
			pause = askIntervalMax
		}
	}
}

// complete reports the outcome of an admitted effect. It is not bound to the
// agent's request: the effect happened whether or not the agent is still there.
func (p *Proxy) complete(ev *Event, o core.Outcome, result string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.Admitter.Complete(ctx, ev.Run, ev.Key, o, result); err != nil && ev.Err == "" {
		ev.Err = "complete: " + err.Error()
	}
}

// hopHeaders are removed in both directions (RFC 9110 section 7.6.1), with ours.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade", HeaderRun, HeaderKey}

func stripHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, ev *Event) {
	body, err := io.ReadAll(io.LimitReader(r.Body, BodyBytesMax+1))
	if err != nil {
		refuse(w, ev, http.StatusBadRequest, "bad-request", "reading the request body: "+err.Error())
		return
	}
	if len(body) > BodyBytesMax {
		refuse(w, ev, http.StatusRequestEntityTooLarge, "bad-request", fmt.Sprintf("request body over %d bytes", BodyBytesMax))
		return
	}
	if ev.Run, ev.Key, err = p.runKey(r, ev.Target, body); err != nil {
		refuseRunKey(w, ev, err)
		return
	}
	if !p.admit(w, r, ev) {
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	stripHop(out.Header)
	resp, err := p.transport().RoundTrip(out)
	if err != nil {
		p.complete(ev, core.OutcomeFailed, "transport: "+err.Error())
		refuse(w, ev, http.StatusBadGateway, "error", fmt.Sprintf("run %s key %q was admitted but forwarding failed: %v", ev.Run, ev.Key, err))
		return
	}
	defer resp.Body.Close()
	stripHop(resp.Header)
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.Header().Set(HeaderVerdict, "admit")
	w.WriteHeader(resp.StatusCode)
	ev.Status = resp.StatusCode
	_, cerr := io.Copy(w, resp.Body)
	result := fmt.Sprintf("HTTP %d", resp.StatusCode)
	if cerr != nil {
		result += "; copying the response: " + cerr.Error()
	}
	p.complete(ev, core.OutcomeOK, result)
}

func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, ev *Event) {
	var err error
	if _, _, err = net.SplitHostPort(r.Host); err != nil {
		refuse(w, ev, http.StatusBadRequest, "bad-request", "CONNECT needs host:port: "+err.Error())
		return
	}
	if ev.Run, ev.Key, err = p.runKey(r, "connect://"+r.Host, nil); err != nil {
		refuseRunKey(w, ev, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		refuse(w, ev, http.StatusInternalServerError, "error", "this connection cannot carry a tunnel")
		return
	}
	if !p.admit(w, r, ev) {
		return
	}
	dctx, cancel := context.WithTimeout(r.Context(), dialTimeout)
	up, err := p.dial(dctx, "tcp", r.Host)
	cancel()
	if err != nil {
		p.complete(ev, core.OutcomeFailed, "dial: "+err.Error())
		refuse(w, ev, http.StatusBadGateway, "error", fmt.Sprintf("run %s key %q was admitted but the dial failed: %v", ev.Run, ev.Key, err))
		return
	}
	agent, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		p.complete(ev, core.OutcomeFailed, "hijack: "+err.Error())
		ev.Err = err.Error()
		return
	}
	ev.Status = http.StatusOK
	p.complete(ev, core.OutcomeOK, "tunnel opened")
	go tunnel(agent, buf.Reader, up)
}

// tunnel copies both ways until either side is done, then closes both.
func tunnel(agent net.Conn, pending io.Reader, up net.Conn) {
	defer agent.Close()
	defer up.Close()
	if _, err := io.WriteString(agent, "HTTP/1.1 200 Connection established\r\n"+HeaderVerdict+": admit\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, pending); closeWrite(up); done <- struct{}{} }()
	go func() { io.Copy(agent, up); closeWrite(agent); done <- struct{}{} }()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
	}
}
