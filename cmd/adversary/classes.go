package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// start runs a gate of e's binary with the roles fixture and the extra flags.
func start(ctx context.Context, e *env, o *outcome, flags ...string) *servertest.Process {
	p, err := servertest.NewProcess(e.bin, append([]string{"serve"}, flags...), e.dir)
	if err == nil {
		err = p.Start(ctx)
	}
	if err != nil {
		o.notes = append(o.notes, "the gate did not start: "+err.Error())
		return nil
	}
	return p
}

func dial(ctx context.Context, sock, token string) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return client.Dial(ctx, "unix:"+sock, token)
}

// cancelAsOperator connects as the operator CLI does (a new connection), opens run
// and cancels it; it returns how long the cancel's connection and call took.
func cancelAsOperator(ctx context.Context, sock, run string) (time.Duration, error) {
	began := time.Now()
	op, err := dial(ctx, sock, servertest.OperatorToken)
	if err != nil {
		return 0, err
	}
	defer op.Close()
	if _, err := op.Open(ctx, run, 0); err != nil {
		return 0, err
	}
	_, err = op.Cancel(ctx, run)
	return time.Since(began), err
}

// floodAgent: one agent token takes every connection it can; the operator must still
// open and cancel runs, each time on a new connection.
func floodAgent(ctx context.Context, e *env) outcome {
	var o outcome
	p := start(ctx, e, &o, "--durability", "memory", "--max-connections", "64", "--reserved-connections", "8")
	if p == nil {
		return o
	}
	defer p.Kill()
	var held []*client.Client
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 64 {
		o.probes++
		c, err := dial(ctx, p.Unix, servertest.AgentToken)
		if err != nil {
			break
		}
		held = append(held, c)
	}
	time.Sleep(100 * time.Millisecond) // the refused connection is let go
	for i := range 50 {
		o.probes++
		took, err := cancelAsOperator(ctx, p.Unix, fmt.Sprint("flood-", i))
		if err != nil {
			o.escalation("with an agent holding %d connections, the operator's cancel %d failed: %v", len(held), i, err)
			continue
		}
		o.cancels = append(o.cancels, took)
	}
	return o
}

// floodAnonymous: connections that never say hello fill the shared listeners; the
// operator must still cancel through the admin socket, and an agent must not get in
// there.
func floodAnonymous(ctx context.Context, e *env) outcome {
	var o outcome
	short, err := os.MkdirTemp("", "sga")
	if err != nil {
		o.notes = append(o.notes, err.Error())
		return o
	}
	defer os.RemoveAll(short)
	admin := filepath.Join(short, "admin.sock")
	p := start(ctx, e, &o, "--durability", "memory", "--max-connections", "32", "--admin-unix", admin)
	if p == nil {
		return o
	}
	defer p.Kill()
	// Silent peers until the shared listeners refuse an operator: the pool is full.
	for full := false; !full && o.probes < 200; {
		o.probes++
		nc, err := net.Dial("unix", p.Unix)
		if err != nil {
			break
		}
		defer nc.Close()
		if o.probes%8 == 0 {
			c, err := dial(ctx, p.Unix, servertest.OperatorToken)
			if full = err != nil; !full {
				c.Close()
			}
		}
	}
	for i := range 20 {
		o.probes++
		if _, err := cancelAsOperator(ctx, admin, fmt.Sprint("anon-", i)); err != nil {
			o.escalation("with the shared listeners full of silent peers, the operator's cancel %d on the admin socket failed: %v", i, err)
		}
	}
	o.probes++
	if c, err := dial(ctx, admin, servertest.AgentToken); err == nil {
		c.Close()
		o.escalation("an agent was let in on the admin socket")
	}
	return o
}

// slowHello: peers that trickle a hello a byte every 50 ms, never ending the line,
// must be closed when the hello window (300 ms here) has passed since their accept,
// however often they send: a peer that could stretch it would hold a connection for
// ever.
func slowHello(ctx context.Context, e *env) outcome {
	const window, trickle, patience = 300 * time.Millisecond, 50 * time.Millisecond, 3 * time.Second
	var o outcome
	p := start(ctx, e, &o, "--durability", "memory", "--listen", "", "--hello-timeout", window.String())
	if p == nil {
		return o
	}
	defer p.Kill()
	closed := make(chan bool, 4)
	for range 4 {
		o.probes++
		go func() { closed <- trickleUntilClosed(p.Unix, trickle, patience) }()
	}
	for range 4 {
		if !<-closed {
			o.escalation("a peer trickling its hello was still connected %v after its accept (hello window %v)", patience, window)
		}
	}
	return o
}

// trickleUntilClosed sends a byte every step until the gate closes the connection
// (true) or patience runs out (false).
func trickleUntilClosed(sock string, step, patience time.Duration) bool {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return true // refused outright: not held open
	}
	defer nc.Close()
	gone := make(chan struct{})
	go func() {
		b := make([]byte, 256)
		for {
			if _, err := nc.Read(b); err != nil {
				close(gone)
				return
			}
		}
	}()
	until := time.After(patience)
	for tick := time.NewTicker(step); ; {
		select {
		case <-gone:
			tick.Stop()
			return true
		case <-until:
			tick.Stop()
			return false
		case <-tick.C:
			nc.Write([]byte("x"))
		}
	}
}

// idleAgent: agents that say hello and then go silent must be closed once idle for
// the idle window (300 ms here), within 3 s of their connect: an agent that went
// away without closing would otherwise hold its share of the connections for ever.
// An operator as silent, at the same time, must stay connected (the reserve is not
// idle capacity).
func idleAgent(ctx context.Context, e *env) outcome {
	const agents, window, patience = 8, 300 * time.Millisecond, 3 * time.Second
	var o outcome
	p := start(ctx, e, &o, "--durability", "memory", "--listen", "", "--idle-timeout", window.String())
	if p == nil {
		return o
	}
	defer p.Kill()
	type silence struct {
		closed bool
		err    error
	}
	silent := func(token string, out chan<- silence) {
		closed, err := helloThenSilence(p.Unix, token, patience)
		out <- silence{closed, err}
	}
	agentsDone, opDone := make(chan silence, agents), make(chan silence, 1)
	go silent(servertest.OperatorToken, opDone)
	for range agents {
		o.probes++
		go silent(servertest.AgentToken, agentsDone)
	}
	for range agents {
		switch r := <-agentsDone; {
		case r.err != nil:
			o.notes = append(o.notes, "setup: "+r.err.Error())
		case !r.closed:
			o.escalation("an agent silent after its hello was still connected %v after its connect (idle timeout %v)", patience, window)
		}
	}
	if r := <-opDone; r.err != nil || r.closed {
		o.notes = append(o.notes, fmt.Sprintf("an operator silent after its hello was closed (%v) or refused (%v)", r.closed, r.err))
	}
	return o
}

// helloThenSilence connects, says hello with token and then sends nothing; it reports
// whether the gate closed the connection within patience of the connect, or why the
// hello was not answered.
func helloThenSilence(sock, token string, patience time.Duration) (closed bool, err error) {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		return false, err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(patience))
	if _, err := fmt.Fprintf(nc, `{"jsonrpc":"2.0","id":0,"method":"hello","params":{"version":1,"token":%q}}`+"\n", token); err != nil {
		return false, err
	}
	r := proto.NewReader(nc)
	line, err := r.ReadLine()
	if err != nil {
		return false, fmt.Errorf("hello: %w", err)
	}
	if resp, err := proto.DecodeResponse(line); err != nil || resp.Error != nil {
		return false, fmt.Errorf("hello refused: %s", line)
	}
	for err == nil {
		_, err = r.ReadLine() // nothing is asked: only the close may come
	}
	return !errors.Is(err, os.ErrDeadlineExceeded), nil
}

// rolesMutations are roles files that must each stop the gate at start: every one
// would widen a token's privilege or accept a guessable token.
func rolesMutations() map[string]string {
	strong := func(name, role, runs string) string {
		return fmt.Sprintf(`{"name": %q, "token": "%s-Zq8vX2mR7tLw4nKp9sBd3hYc6fJg", "role": %q%s}`, name, name, role, runs)
	}
	file := func(tokens ...string) string { return `{"tokens": [` + strings.Join(tokens, ", ") + `]}` }
	agent := strong("worker", "agent", `, "runs": ["team-a-*"]`)
	return map[string]string{
		"misspelt runs":  file(agent, strong("alice", "approver", `, "run": ["team-a-*"]`)),
		"empty runs":     file(agent, strong("alice", "approver", `, "runs": []`)),
		"null runs":      file(agent, strong("alice", "approver", `, "runs": null`)),
		"no runs":        file(agent, strong("ops", "operator", ``)),
		"runs twice":     file(agent, strong("alice", "approver", `, "runs": ["team-a-*"], "runs": []`)),
		"role twice":     file(strong("worker", "agent", `, "runs": ["*"], "role": "approver"`)),
		"unknown field":  `{"tokens": [` + agent + `], "admins": []}`,
		"repeated name":  file(agent, strong("worker", "approver", `, "runs": ["*"]`)),
		"weak token":     `{"tokens": [{"name": "w", "token": "` + strings.Repeat("a", 40) + `", "role": "operator", "runs": ["*"]}]}`,
		"placeholder":    `{"tokens": [{"name": "w", "token": "operator-token-change-me-please-0123", "role": "operator", "runs": ["*"]}]}`,
		"world-writable": file(agent),
	}
}

// rolesFile: each mutated roles file must stop the gate at start (usage exit code);
// a gate that starts on one is an escalation.
func rolesFile(ctx context.Context, e *env) outcome {
	var o outcome
	i := 0
	for name, content := range rolesMutations() {
		i++
		o.probes++
		path := filepath.Join(e.dir, fmt.Sprintf("roles-%d.json", i))
		mode := os.FileMode(0o600)
		if name == "world-writable" {
			mode = 0o666
		}
		err := os.WriteFile(path, []byte(content), 0o600)
		if err == nil {
			err = os.Chmod(path, mode)
		}
		if err != nil {
			o.notes = append(o.notes, fmt.Sprintf("setup of roles file %q: %v", name, err))
			continue
		}
		sock := filepath.Join(e.dir, fmt.Sprintf("r%d.sock", i))
		code, started := startAndWait(ctx, e.bin, "serve", "--roles", path, "--durability", "memory", "--listen", "", "--unix", sock)
		if started || code != 2 {
			o.escalation("roles file %q: the gate started (or exited %d) instead of refusing it", name, code)
		}
	}
	return o
}

// startAndWait runs the binary; started is true if it was still running after 3 s
// (then it is killed), else code is its exit code.
func startAndWait(ctx context.Context, bin string, args ...string) (code int, started bool) {
	cmd := exec.CommandContext(ctx, bin, args...)
	if err := cmd.Start(); err != nil {
		return -1, false
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode(), false
		}
		return 0, false
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		<-done
		return 0, true
	}
}

// takeover: a second gate on the socket of a running one (another data directory),
// a second gate on its data directory, and a gate on a path that holds a file or a
// directory must each refuse to start, leave what is there as it was, and never
// admit a key the first gate admitted.
func takeover(ctx context.Context, e *env) outcome {
	var o outcome
	p := start(ctx, e, &o, "--listen", "")
	if p == nil {
		return o
	}
	defer p.Kill()
	admit := func() (core.Answer, error) {
		c, err := dial(ctx, p.Unix, servertest.AgentToken)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		r, err := c.Admit(ctx, "r1", "wire-money", 1, client.AdmitOptions{})
		return r.Answer, err
	}
	if _, err := cancelAsOperator(ctx, p.Unix, "r0"); err != nil {
		o.notes = append(o.notes, "setup: "+err.Error())
	}
	op, err := dial(ctx, p.Unix, servertest.OperatorToken)
	if err == nil {
		_, err = op.Open(ctx, "r1", 0)
		op.Close()
	}
	if a, aerr := admit(); err != nil || aerr != nil || a != core.AnswerAdmit {
		o.notes = append(o.notes, fmt.Sprintf("setup: open %v, first admit %v %v", err, a, aerr))
	}
	roles := filepath.Join(e.dir, "roles.json")
	o.probes++
	if _, started := startAndWait(ctx, e.bin, "serve", "--roles", roles, "--data", filepath.Join(e.dir, "data-b"), "--listen", "", "--unix", p.Unix); started {
		o.escalation("a second gate with another data directory served on the first one's socket")
	}
	if a, err := admit(); err != nil || a != core.AnswerDuplicate {
		o.stateChange("the key the first gate admitted was answered %v (%v) after the second gate's start: admitted twice", a, err)
	}
	o.probes++
	if _, started := startAndWait(ctx, e.bin, "serve", "--roles", roles, "--data", filepath.Join(e.dir, "data"), "--listen", "", "--unix", filepath.Join(e.dir, "c.sock")); started {
		o.escalation("a second gate started on the first one's data directory")
	}
	occupied(ctx, e, &o, roles)
	return o
}

// occupied: a gate asked to listen where a file or a directory is must not start,
// and must leave it as it was.
func occupied(ctx context.Context, e *env, o *outcome, roles string) {
	file, dir := filepath.Join(e.dir, "precious.txt"), filepath.Join(e.dir, "a-directory")
	os.WriteFile(file, []byte("precious"), 0o600)
	os.Mkdir(dir, 0o700)
	for _, path := range []string{file, dir, roles} {
		o.probes++
		before, _ := os.ReadFile(path)
		startAndWait(ctx, e.bin, "serve", "--roles", roles, "--durability", "memory", "--listen", "", "--unix", path)
		st, err := os.Lstat(path)
		after, _ := os.ReadFile(path)
		if err != nil || st.Mode()&os.ModeSocket != 0 || string(before) != string(after) {
			o.stateChange("a gate asked to listen on %s replaced what was there", filepath.Base(path))
		}
	}
}

// injections are keys an agent may choose to forge or hide lines of what an
// approver reads.
var injections = []string{
	"k\nrun r1 cancelled epoch=2 pending=[]",
	"\x1b[2J\x1b[Hall clear",
	"\u202eyenom-eriw",
	"wire\u200bmoney",
}

// display: keys that forge a line or hide themselves, read back through `soundgate
// status` as an approver would: every line the command prints is one the gate
// meant, and it holds no character a terminal would act on or hide.
func display(ctx context.Context, e *env) outcome {
	var o outcome
	p := start(ctx, e, &o, "--durability", "memory", "--listen", "")
	if p == nil {
		return o
	}
	defer p.Kill()
	tokenFile := filepath.Join(e.dir, "approver.token")
	os.WriteFile(tokenFile, []byte(servertest.ApproverToken+"\n"), 0o600)
	for i, key := range injections {
		run := fmt.Sprint("r", i)
		op, err := dial(ctx, p.Unix, servertest.OperatorToken)
		if err == nil {
			_, err = op.Open(ctx, run, 0)
			op.Close()
		}
		agent, aerr := dial(ctx, p.Unix, servertest.AgentToken)
		if aerr == nil {
			_, aerr = agent.Admit(ctx, run, key, 1, client.AdmitOptions{Gated: true})
			agent.Close()
		}
		if err != nil || aerr != nil {
			o.notes = append(o.notes, fmt.Sprintf("setup of %q: %v %v", key, err, aerr))
			continue
		}
		for _, args := range [][]string{{run}, {run, key}} {
			o.probes++
			out, err := exec.CommandContext(ctx, e.bin, append([]string{"status", "--addr", "unix:" + p.Unix, "--token-file", tokenFile}, args...)...).Output()
			if err != nil {
				o.notes = append(o.notes, fmt.Sprintf("status %q: %v", args, err))
				continue
			}
			if lines := strings.Count(string(out), "\n"); lines != len(args) || !printable(strings.TrimSuffix(string(out), "\n")) {
				o.escalation("status %q printed %q: %d lines for %d, or a character a terminal acts on", args, out, lines, len(args))
			}
		}
	}
	return o
}

// printable: every character but the line breaks is one strconv.IsPrint accepts.
func printable(s string) bool {
	for _, r := range s {
		if r != '\n' && !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// quota: one agent asks for every wait the gate has; another agent must still get
// one. Then one token takes runs and another result bytes until refused (quotaShares).
func quota(ctx context.Context, e *env) outcome {
	var o outcome
	p := start(ctx, e, &o, "--durability", "memory", "--listen", "", "--max-waiters", "64", "--max-waiters-per-token", "16",
		"--max-runs", "64", "--max-runs-per-token", "16", "--max-result-bytes-per-token", "4096")
	if p == nil {
		return o
	}
	defer p.Kill()
	op, err := dial(ctx, p.Unix, servertest.OperatorToken)
	if err != nil {
		o.notes = append(o.notes, "setup: "+err.Error())
		return o
	}
	defer op.Close()
	for _, run := range []string{"r1", "team-a-1"} { // each held by a pending approval
		op.Open(ctx, run, 0)
		if a, err := dial(ctx, p.Unix, servertest.AgentToken); err == nil {
			a.Admit(ctx, run, "gate", 1, client.AdmitOptions{Gated: true})
			a.Close()
		}
	}
	agent, err := dial(ctx, p.Unix, servertest.AgentToken)
	if err != nil {
		o.notes = append(o.notes, "setup: "+err.Error())
		return o
	}
	defer agent.Close()
	for i := range 64 {
		o.probes++
		servertest.AdmitAsync(agent, "r1", fmt.Sprint("k", i), 1, client.AdmitOptions{Wait: time.Minute})
	}
	time.Sleep(300 * time.Millisecond)
	o.probes++
	other, err := dial(ctx, p.Unix, servertest.ScopedToken)
	if err != nil {
		o.escalation("with one agent's waits taken, another agent could not connect: %v", err)
		return o
	}
	defer other.Close()
	select {
	case r := <-servertest.AdmitAsync(other, "team-a-1", "k", 1, client.AdmitOptions{Wait: time.Minute}):
		if errors.Is(r.Err, proto.ErrOverloaded) || errors.Is(r.Err, proto.ErrQuota) {
			o.escalation("one agent's waits made another agent's wait fail: %v", r.Err)
		}
	case <-time.After(500 * time.Millisecond): // it waits, as it should
	}
	quotaShares(ctx, op, agent, &o)
	return o
}

// quotaShares: the operator token opens runs of the 64 all tokens share, and an agent
// records results of 1 KiB, each until refused; neither may pass its quota.
func quotaShares(ctx context.Context, op, agent *client.Client, o *outcome) {
	runs := 2 // quota's r1 and team-a-1
	for i := range 64 {
		o.probes++
		if _, err := op.Open(ctx, fmt.Sprint("q-", i), 0); err != nil {
			break
		}
		runs++
	}
	if runs > 16 {
		o.escalation("one operator token opened %d runs of the gate's 64, past its quota of 16", runs)
	}
	recorded := 0
	for i := range 16 {
		o.probes++
		key := fmt.Sprint("result-", i)
		if _, err := agent.Admit(ctx, "q-0", key, 1, client.AdmitOptions{}); err != nil {
			break
		}
		if _, err := agent.Complete(ctx, "q-0", key, core.OutcomeOK, strings.Repeat("x", 1024)); err != nil {
			break
		}
		recorded += 1024
	}
	if recorded > 4096 {
		o.escalation("one agent recorded %d bytes of results, past its quota of 4096", recorded)
	}
}
