package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
)

// Tests of the page that need its clock or its timeouts (web.go): expiry, and
// streams that outlive the listener's read and write timeouts.

// webFixture is a server with the fixture's roles serving its HTTP listener with
// times and a clock the test moves.
type webFixture struct {
	s    *Server
	n    *node.Node
	wb   *web
	base string

	mu  sync.Mutex
	now time.Time
}

func newWebFixture(t *testing.T, times webTimeouts) *webFixture {
	t.Helper()
	b, err := os.ReadFile("servertest/roles.json") // the fixture (servertest imports this package)
	require.NoError(t, err)
	rs, err := ParseRoles(b, RolesOptions{})
	require.NoError(t, err)
	f := &webFixture{n: node.New(node.Config{}), now: time.Unix(1_700_000_000, 0)}
	f.s, err = New(Config{Roles: rs, Node: f.n, Metrics: true})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f.base = "http://" + l.Addr().String()
	f.wb = newWeb(f.s, l, times)
	f.wb.now = func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }
	served := make(chan error, 1)
	go func() { served <- f.s.serveWeb(l, f.wb) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.NoError(t, f.s.Shutdown(ctx))
		require.NoError(t, <-served)
		f.n.Close()
	})
	return f
}

func (f *webFixture) advance(d time.Duration) { f.mu.Lock(); f.now = f.now.Add(d); f.mu.Unlock() }

// signIn signs the approver of the fixture in: its cookie and CSRF token.
func (f *webFixture) signIn(t *testing.T) (*http.Cookie, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.base+"/api/signin", strings.NewReader(`{"token": "approver-token-0123456789abcdefgh"}`))
	require.NoError(t, err)
	req.Header.Set("Origin", f.base)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var body struct{ CSRF string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.Cookies()[0], body.CSRF
}

// pending lists the inbox as the page does, and returns the status and the message.
func (f *webFixture) pending(t *testing.T, c *http.Cookie, csrf string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.base+"/api/pending", strings.NewReader(`{}`))
	require.NoError(t, err)
	req.Header.Set("Origin", f.base)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webCSRFHeader, csrf)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// stream opens the event stream and hands its lines over a channel (closed at its end).
func (f *webFixture) stream(t *testing.T, c *http.Cookie, csrf string) <-chan string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.base+"/api/events", nil)
	require.NoError(t, err)
	req.Header.Set(webCSRFHeader, csrf)
	req.AddCookie(c)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	t.Cleanup(func() { resp.Body.Close() })
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() != "" {
				lines <- sc.Text()
			}
		}
	}()
	return lines
}

// waitLine waits up to 5 s for a line of lines that holds want, and fails at the
// stream's end.
func waitLine(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the stream ended before %q", want)
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no %q within 5 s", want)
		}
	}
}

// TestPageSessionExpiry: a page session ends after webSessionIdle without a request
// (an open stream keeps it), and webSessionLifetime after its sign-in whatever it
// does; its stream then ends saying so.
func TestPageSessionExpiry(t *testing.T) {
	f := newWebFixture(t, webTimeouts{readHeader: time.Second, read: time.Second, write: time.Second, idle: time.Second, heartbeat: time.Second, poll: 10 * time.Millisecond})
	c, csrf := f.signIn(t)
	f.advance(webSessionIdle - time.Minute)
	status, _ := f.pending(t, c, csrf)
	require.Equal(t, http.StatusOK, status, "a request within the idle time")
	f.advance(webSessionIdle)
	status, body := f.pending(t, c, csrf)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, body, "idle")

	c, csrf = f.signIn(t)
	lines := f.stream(t, c, csrf)
	waitLine(t, lines, "event: ready")
	f.advance(webSessionIdle + time.Minute)
	status, _ = f.pending(t, c, csrf)
	require.Equal(t, http.StatusOK, status, "an open stream is not idle")
	for elapsed := webSessionIdle + time.Minute; elapsed+webSessionIdle/2 < webSessionLifetime; elapsed += webSessionIdle / 2 {
		f.advance(webSessionIdle / 2)
		status, _ = f.pending(t, c, csrf)
		require.Equal(t, http.StatusOK, status)
	}
	f.advance(webSessionIdle / 2)
	require.Contains(t, waitLine(t, lines, "event: "), "event: end")
	require.Contains(t, waitLine(t, lines, "data: "), `"session_ended":true`)
	status, _ = f.pending(t, c, csrf)
	require.Equal(t, http.StatusUnauthorized, status, "the stream ended it")
	f.wb.mu.Lock()
	require.Empty(t, f.wb.sessions, "ended sessions are forgotten")
	f.wb.mu.Unlock()
}

// TestPageStreamOutlivesTimeouts: a stream lives past the listener's write timeout
// (which cuts an ordinary answer) and its read timeout, sending heartbeats while the
// inbox is quiet and the inbox's changes when there are.
func TestPageStreamOutlivesTimeouts(t *testing.T) {
	times := webTimeouts{readHeader: time.Second, read: 150 * time.Millisecond, write: 250 * time.Millisecond, idle: time.Second,
		heartbeat: 40 * time.Millisecond, poll: 20 * time.Millisecond}
	f := newWebFixture(t, times)
	c, csrf := f.signIn(t)
	lines := f.stream(t, c, csrf)
	waitLine(t, lines, "event: ready")
	start := time.Now()
	beats := 0
	for time.Since(start) < 4*times.write {
		waitLine(t, lines, ": heartbeat")
		beats++
	}
	require.GreaterOrEqual(t, beats, 5)
	a := f.n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "r"}})
	require.NoError(t, a.Err)
	a = f.n.Apply(node.Request{Cmd: core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1, Gated: true}})
	require.NoError(t, a.Err)
	require.Contains(t, waitLine(t, lines, "data: {\"kind\""), `"kind":"pending","run":"r","key":"k"`)
}
