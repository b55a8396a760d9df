package fuzz

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// FuzzSession: arbitrary bytes sent into the live, authenticated connections of an
// in-process server, interleaved with a fixed valid script, never crash it or fail it
// closed, and change nothing that the valid requests among them do not: the gate's
// state afterwards (its node's) and every answer to the script are the same as
// when only the valid requests are sent (the lines of the input that the protocol's
// decoder accepts, in the same places). Garbage is answered with errors and is
// otherwise inert.
//
// The input is split at NUL bytes into chunks; chunk i is written, followed by an LF,
// on the connection of script step i just before that step (chunks beyond the script
// go after its last step).
func FuzzSession(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("garbage"))
	f.Add([]byte("{}\x00\x00{\"jsonrpc\":\"2.0\"}\x00\r\n\r\n\x00" + strings.Repeat("x", 70000)))
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"fz-a","key":"k9","epoch":1}}` + "\x00" +
		`{"jsonrpc":"2.0","id":2,"method":"admit","params":{"run":"fz-a","key":"k1","epoch":"1"}}` + "\n" +
		`{"jsonrpc":"2.0","id":3,"method":"hello","params":{"version":1,"token":"nope"}}`))
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"cancel","params":{"run":"fz-a"}}` + "\x00" +
		`{"jsonrpc":"2.0","id":8,"method":"decide","params":{"run":"fz-a","key":"k2","decision":"reject"}}` + "\x00\x00" +
		`{"jsonrpc":"2.0","id":9,"method":"admit","params":{"run":"fz-b","key":"k1","epoch":1,"wait_ms":50}}`))
	f.Add([]byte("\xff\xfe\x00{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"status\",\"params\":{\"run\":\"fz-a\"}}\x00[1,2,3]\x00\"\\ud800\""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if bytes.Contains(data, []byte(scriptIDMark)) {
			return // a chunk could forge a script answer's id
		}
		defer watchdog(t, "session", data)()
		chunks := bytes.Split(data, []byte{0})
		valid := make([][]byte, len(chunks))
		for i, c := range chunks {
			valid[i] = validLines(c)
		}
		got := runSession(t, chunks)
		want := plainSession(t)
		if slices.ContainsFunc(valid, func(v []byte) bool { return len(v) > 0 }) {
			want = runSession(t, valid)
		}
		for i := range want.answers {
			if !bytes.Equal(got.answers[i], want.answers[i]) {
				t.Fatalf("script step %d (%s) was answered\n  %s\nwith the garbage, and\n  %s\nwithout it", i, sessionScript[i].line, got.answers[i], want.answers[i])
			}
		}
		if !bytes.Equal(got.state, want.state) {
			t.Fatalf("the gate's state after the session differs from its state after the valid requests only\n got %q\nwant %q", got.state, want.state)
		}
	})
}

var (
	plainOnce sync.Once
	plain     sessionResult
)

// plainSession is the session of the script alone (computed once): the reference for
// every input without a valid line, since empty lines are skipped by the server.
func plainSession(t *testing.T) sessionResult {
	plainOnce.Do(func() { plain = runSession(t, nil) })
	if plain.answers == nil {
		t.Fatal("the reference session failed")
	}
	return plain
}

// scriptIDMark is in every id of the script's requests (and in no id of the input).
const scriptIDMark = "~script~"

// The session's tokens: the roles fixture's.
const (
	fzAgent    = servertest.AgentToken
	fzApprover = servertest.ApproverToken
	fzOperator = servertest.OperatorToken
)

// scriptStep is one valid request of the fixed script, on the connection of a role.
type scriptStep struct {
	role proto.Role
	line string // the request without id: {"method":..., "params":...}
}

// sessionScript exercises every method and every admit answer, including a released
// effect asked again while another approval is open (P1) and a completed one (P3).
var sessionScript = []scriptStep{
	{proto.RoleOperator, `"method":"open","params":{"run":"fz-a"}`},
	{proto.RoleOperator, `"method":"open","params":{"run":"fz-b","timeout_ms":3600000}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k1","epoch":1}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k2","epoch":1,"gated":true}`},
	{proto.RoleApprover, `"method":"decide","params":{"run":"fz-a","key":"k2","decision":"approve"}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k4","epoch":1,"gated":true}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k2","epoch":1}`}, // released, k4 pending: held (P1)
	{proto.RoleApprover, `"method":"decide","params":{"run":"fz-a","key":"k4","decision":"approve"}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k2","epoch":1}`},
	{proto.RoleAgent, `"method":"complete","params":{"run":"fz-a","key":"k1","outcome":"ok","result":"done"}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k1","epoch":1}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-b","key":"k1","epoch":1,"gated":true}`},
	{proto.RoleApprover, `"method":"decide","params":{"run":"fz-b","key":"k1","decision":"reject"}`},
	{proto.RoleOperator, `"method":"fence","params":{"run":"fz-a"}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k3","epoch":1}`},
	{proto.RoleAgent, `"method":"admit","params":{"run":"fz-a","key":"k3","epoch":3}`},
	{proto.RoleOperator, `"method":"cancel","params":{"run":"fz-b"}`},
	{proto.RoleAgent, `"method":"status","params":{"run":"fz-a","key":"k2"}`},
}

// validLines keeps the lines of chunk that the protocol decoder accepts, split as the
// server's reader splits them.
func validLines(chunk []byte) []byte {
	var out []byte
	r := proto.NewReader(bytes.NewReader(append(bytes.Clone(chunk), '\n')))
	for {
		line, err := r.ReadLine()
		if err != nil {
			if errors.Is(err, proto.ErrLineTooLong) {
				continue
			}
			return out
		}
		if _, err := proto.Decode(line); err == nil {
			out = append(append(out, line...), '\n')
		}
	}
}

// sessionResult is what a session left: the script's answers and the gate's state.
type sessionResult struct {
	answers [][]byte
	state   []byte
}

// sessionConn is the client end of one connection with a reader of its answers.
type sessionConn struct {
	nc      net.Conn
	answers chan []byte // answers to script requests, by arrival
	wmu     sync.Mutex
}

// answerWaitMax bounds the wait for one answer of the script.
const answerWaitMax = 5 * time.Second

// runSession runs the script on a fresh in-process server with chunks[i] written
// before step i, and returns the script's answers and the final state.
func runSession(t *testing.T, chunks [][]byte) sessionResult {
	t.Helper()
	g, err := servertest.New(servertest.Options{Node: node.Config{Now: func() core.Time { return 1_000_000 }}, Pipe: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
	}()

	conns := map[proto.Role]*sessionConn{}
	for role, token := range map[proto.Role]string{proto.RoleAgent: fzAgent, proto.RoleApprover: fzApprover, proto.RoleOperator: fzOperator} {
		cli, err := g.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		sc := &sessionConn{nc: cli, answers: make(chan []byte, len(sessionScript)+4)}
		go sc.readLoop()
		defer cli.Close()
		conns[role] = sc
		hello := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%shello","method":"hello","params":{"version":1,"token":"%s"}}`+"\n", scriptIDMark, token)
		if a := sc.ask(t, []byte(hello)); !bytes.Contains(a, []byte(`"result"`)) {
			t.Fatalf("hello refused: %s", a)
		}
	}
	var res sessionResult
	for i, step := range sessionScript {
		c := conns[step.role]
		if i < len(chunks) {
			c.send(append(bytes.Clone(chunks[i]), '\n'))
		}
		line := fmt.Sprintf(`{"jsonrpc":"2.0","id":"%s%d",%s}`+"\n", scriptIDMark, i, step.line)
		res.answers = append(res.answers, c.ask(t, []byte(line)))
	}
	last := conns[sessionScript[len(sessionScript)-1].role]
	for _, c := range chunks[min(len(chunks), len(sessionScript)):] {
		last.send(append(bytes.Clone(c), '\n'))
	}
	// A final status on the same connection: every chunk before it has been handled.
	last.ask(t, []byte(`{"jsonrpc":"2.0","id":"`+scriptIDMark+`end","method":"status","params":{"run":"fz-a"}}`+"\n"))
	if err := g.Node.Failed(); err != nil {
		t.Fatalf("the server failed closed: %v", err)
	}
	res.state = g.State(t)
	return res
}

// send writes b. net.Pipe is unbuffered; readLoop drains the answers meanwhile, so
// the server's reader always makes progress and the write completes.
func (c *sessionConn) send(b []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.nc.SetWriteDeadline(time.Now().Add(answerWaitMax))
	c.nc.Write(b)
}

// ask sends one script request and returns its answer, or "closed" when the server
// closed the connection (a hello of another version among the valid lines does).
func (c *sessionConn) ask(t *testing.T, line []byte) []byte {
	t.Helper()
	c.send(line)
	select {
	case a, ok := <-c.answers:
		if !ok {
			return []byte("closed")
		}
		return a
	case <-time.After(answerWaitMax):
		t.Fatalf("no answer within %v to %s", answerWaitMax, line)
	}
	return nil
}

// readLoop reads answers; those to script requests go to c.answers, the others (to
// the input's lines) are checked to be answers and dropped.
func (c *sessionConn) readLoop() {
	defer close(c.answers)
	r := bufio.NewReaderSize(c.nc, 1<<16)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrClosedPipe) {
				c.answers <- []byte("read error: " + err.Error())
			}
			return
		}
		resp, err := proto.DecodeResponse(line)
		if err != nil {
			c.answers <- []byte(fmt.Sprintf("the server sent a line that is not an answer: %q (%v)", line, err))
			return
		}
		if resp.ID.Kind == proto.IDString && strings.HasPrefix(resp.ID.Str, scriptIDMark) {
			c.answers <- line
		}
	}
}

// TestSessionScript pins the script's answers without garbage (so that a core built
// with -tags broken_p1 or broken_p3 fails here), and shows that the comparison of
// FuzzSession sees a state change: one valid cancel among the chunks
// (which the target would replay in both sessions) changes state and answers.
func TestSessionScript(t *testing.T) {
	want := []string{
		`"created":true`, `"created":true`, `"answer":"admit"`, `"answer":"held"`, `"decision":"approve"`,
		`"answer":"held"`, `"answer":"held"`, `"decision":"approve"`, `"answer":"admit"`, `"repeat":false`, `"answer":"duplicate"`, `"answer":"held"`, `"decision":"reject"`,
		`"epoch":2`, `"reason":"stale_epoch"`, `"bad_epoch"`, `"status":"cancelled"`, `"status":"admitted"`,
	}
	plain := runSession(t, nil)
	for i, w := range want {
		if !bytes.Contains(plain.answers[i], []byte(w)) {
			t.Errorf("step %d (%s): answer %s does not contain %s", i, sessionScript[i].line, plain.answers[i], w)
		}
	}
	cancel := [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"fz-a"}}`)}
	if validLines(cancel[0]) == nil {
		t.Fatal("validLines dropped a valid request")
	}
	changed := runSession(t, cancel)
	if bytes.Equal(changed.state, plain.state) || bytes.Equal(changed.answers[2], plain.answers[2]) {
		t.Error("a cancel before the script changed neither the state nor the answers: the comparison is blind")
	}
	garbage := [][]byte{[]byte(`{"jsonrpc":"2.0","id":1,"method":"cancel","params":{"run":"fz-a"},}`)}
	if validLines(garbage[0]) != nil {
		t.Fatal("validLines kept an invalid request")
	}
}
