// Package client is the Go client of the soundgate effect gate.
//
// A Client is one authenticated connection. It is safe for concurrent use: calls from
// many goroutines are pipelined on the connection and their answers matched by id.
// Every call takes a context; when it ends before the answer arrives the call returns
// ctx.Err() and the answer, if it comes, is dropped (the request may still have taken
// effect: an unknown outcome).
//
// Typical use at an effect's commit point:
//
//	res, err := c.Admit(ctx, run, key, epoch, client.AdmitOptions{Gated: true, Wait: time.Minute})
//	switch {
//	case err != nil:            // refused or unreachable: do NOT perform the effect
//	case res.Answer == core.AnswerAdmit:     // perform it, then c.Complete(...)
//	case res.Answer == core.AnswerDuplicate: // already done: reuse res.Outcome/res.Result
//	default:                    // held (still waiting) or denied (res.Reason): do not perform it
//	}
//
// Errors the gate returns are typed: errors.Is(err, core.ErrUnknownRun),
// errors.Is(err, proto.ErrForbidden), and so on.
//
// Run ids, keys, results and tokens must be valid UTF-8: the wire is JSON text, and an
// invalid byte would be rewritten to U+FFFD, so that two distinct binary keys became the
// same key. A call given one returns ErrNotUTF8 and sends nothing; encode binary values
// (a hash, say) in hex or base64 first. A request whose encoded line would exceed
// proto.LineBytesMax returns ErrRequestTooLarge and sends nothing; the connection stays
// usable. Any failed write (a context deadline in the middle of a line included) breaks
// the connection for good: later calls return ErrClosed.
package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// ErrClosed is returned by calls on a closed client or a broken connection. When the
// connection broke, the error returned also wraps the cause (errors.Is works on both).
var ErrClosed = errors.New("soundgate/client: connection closed")

// ErrNotUTF8 is returned, wrapped with the field's name ("run", "key", "result",
// "token", "description", "args_digest", "reason", "cursor"), by a call given a
// string that is not valid UTF-8. Nothing is sent.
var ErrNotUTF8 = errors.New("soundgate/client: not valid UTF-8")

// ErrRequestTooLarge is returned by a call whose encoded request line would exceed
// proto.LineBytesMax bytes (a result full of control characters, each escaped to six
// bytes, can). Nothing is sent and the connection stays usable.
var ErrRequestTooLarge = errors.New("soundgate/client: request line too long")

// Client is one authenticated connection to a gate.
type Client struct {
	nc   net.Conn
	Role proto.Role // the role the server granted the token

	// Writes are combined: a call appends its encoded line to pend, and the call that
	// finds nobody writing becomes the flusher and writes everything pending, its own
	// line and those appended meanwhile, one write per round. So many goroutines
	// pipelining on one connection share write system calls instead of queueing for
	// one each.
	wmu      sync.Mutex
	pend     []byte // encoded lines not yet written
	spare    []byte // the flusher's previous buffer, reused
	flushing bool   // a call is writing pend

	readDone  chan struct{} // closed when readLoop returns
	closeOnce sync.Once
	closeErr  error

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan proto.Response
	err     error  // sticky: set when the connection broke or was closed
	watch   *Watch // the connection's watch of the inbox, if any (watch.go)
}

func newClient(nc net.Conn) *Client {
	c := &Client{nc: nc, waiting: map[int64]chan proto.Response{}, readDone: make(chan struct{})}
	go c.readLoop()
	return c
}

// Dial connects to a gate at addr and says hello with token. addr is "unix:/path",
// a path starting with "/", or "host:port" for TCP.
func Dial(ctx context.Context, addr, token string) (*Client, error) {
	if !utf8.ValidString(token) {
		return nil, fmt.Errorf("%w: token", ErrNotUTF8) // before dialing: nothing is sent
	}
	network, address := SplitAddr(addr)
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("soundgate/client: dial %s: %w", addr, err)
	}
	c := newClient(nc)
	var hello proto.HelloResult
	if err := c.call(ctx, &proto.Request{Method: proto.MethodHello, Version: proto.Version, Token: token}, &hello); err != nil {
		c.Close()
		return nil, err
	}
	c.Role = hello.Role
	return c, nil
}

// SplitAddr turns a gate address as Dial takes it into the network and address of
// net.Dial: "unix:/path" and "/path" are Unix sockets, anything else is TCP host:port.
func SplitAddr(addr string) (network, address string) {
	switch {
	case strings.HasPrefix(addr, "unix:"):
		return "unix", strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "/"):
		return "unix", addr
	}
	return "tcp", addr
}

// Close closes the connection; calls in flight and later calls return ErrClosed.
func (c *Client) Close() error {
	c.fail(ErrClosed)
	return c.closeConn()
}

// closeConn closes the socket once: the server then drops the connection's parked
// admits, and a blocked Write or ReadLine returns.
func (c *Client) closeConn() error {
	c.closeOnce.Do(func() { c.closeErr = c.nc.Close() })
	return c.closeErr
}

func (c *Client) readLoop() {
	defer close(c.readDone)
	r := proto.NewAnswerReader(c.nc) // answers may be longer than requests
	for {
		line, err := r.ReadLine()
		if err != nil {
			c.broken(err)
			return
		}
		resp, err := proto.DecodeResponse(line)
		if err != nil {
			// A line without an id may be a notification of the connection's watch.
			if method, params, nerr := proto.DecodeNotification(line); nerr == nil {
				err = c.notified(method, params)
				if err == nil {
					continue
				}
			}
			c.broken(err)
			return
		}
		if resp.ID.Kind != proto.IDInt {
			// An answer to no request: the server refused the connection (overloaded,
			// shutting down) or a line it could not read.
			if resp.Error != nil {
				c.broken(resp.Error.Err())
				return
			}
			continue
		}
		c.mu.Lock()
		ch := c.waiting[resp.ID.Int]
		delete(c.waiting, resp.ID.Int)
		c.mu.Unlock()
		if ch != nil {
			ch <- resp
		}
	}
}

// broken marks the connection broken by cause (sticky), fails the calls in flight and
// closes the socket.
func (c *Client) broken(cause error) {
	c.fail(fmt.Errorf("%w: %w", ErrClosed, cause)) // both testable with errors.Is
	c.closeConn()
}

// fail sets the sticky error unless one is set, and fails the calls in flight.
func (c *Client) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
	if c.watch != nil {
		c.watch.end(c.err)
		c.watch = nil
	}
}

// checkUTF8 returns ErrNotUTF8 naming the first string field of req that is not valid
// UTF-8.
func checkUTF8(req *proto.Request) error {
	for _, f := range [...]struct {
		name, v string
	}{{"token", req.Token}, {"run", string(req.Run)}, {"key", string(req.Key)}, {"result", req.Result},
		{"description", req.Description}, {"args_digest", req.ArgsDigest}, {"reason", req.Reason}, {"cursor", req.Cursor}} {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%w: %s", ErrNotUTF8, f.name)
		}
	}
	return nil
}

// call sends req and decodes the result into out.
func (c *Client) call(ctx context.Context, req *proto.Request, out json.Unmarshaler) error {
	if err := checkUTF8(req); err != nil {
		return err
	}
	ch := make(chan proto.Response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	c.waiting[id] = ch
	c.mu.Unlock()
	req.ID = proto.IntID(id)

	if err := c.write(ctx, req); err != nil {
		c.forget(id)
		return err
	}
	select {
	case resp, ok := <-ch:
		if !ok {
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.err
		}
		if resp.Error != nil {
			return &Error{Object: *resp.Error}
		}
		return out.UnmarshalJSON(resp.Result)
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
}

// write encodes req and queues it as one line, writing it (and the lines other calls
// queued meanwhile) unless another call is writing already, which then writes it. A
// ctx that has ended returns ctx.Err(), and a line over proto.LineBytesMax returns
// ErrRequestTooLarge; both send nothing and leave the connection usable. A failed
// write (even a partial one, or the writing call's ctx deadline in the middle of a
// line) breaks the connection, since half a line may be on the wire: every call in
// flight then returns ErrClosed.
func (c *Client) write(ctx context.Context, req *proto.Request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	err := c.err
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.wmu.Lock()
	start := len(c.pend)
	c.pend = proto.AppendRequest(c.pend, req)
	if n := len(c.pend) - start - 1; n > proto.LineBytesMax { // the line without its LF
		c.pend = c.pend[:start]
		c.wmu.Unlock()
		return fmt.Errorf("%w: %d bytes encoded, at most %d", ErrRequestTooLarge, n, proto.LineBytesMax)
	}
	if c.flushing {
		c.wmu.Unlock() // the flusher writes it before it stops
		return nil
	}
	c.flushing = true
	for len(c.pend) > 0 {
		buf := c.pend
		c.pend = c.spare[:0]
		c.wmu.Unlock()
		if dl, ok := ctx.Deadline(); ok {
			err = c.nc.SetWriteDeadline(dl)
		} else {
			err = c.nc.SetWriteDeadline(time.Time{})
		}
		if err == nil {
			_, err = c.nc.Write(buf)
		}
		c.wmu.Lock()
		if cap(buf) <= spareBytesMax {
			c.spare = buf
		}
		if err != nil {
			c.pend = c.pend[:0]
			c.flushing = false
			c.wmu.Unlock()
			return c.writeFailed(err)
		}
	}
	c.flushing = false
	c.wmu.Unlock()
	return nil
}

// writeFailed breaks the connection after a failed write and returns the error for
// the call. When the gate had closed the connection (EPIPE, ECONNRESET), it may have
// said why first (overloaded, shutting down): the reader reads that line before the
// end of the stream, so wait for it, briefly, and report the gate's reason.
func (c *Client) writeFailed(err error) error {
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) {
		select {
		case <-c.readDone:
		case <-time.After(peerGoneWait):
		}
	}
	c.broken(err)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// peerGoneWait bounds how long a failed write waits for the reader to see why the
// gate closed the connection.
const peerGoneWait = time.Second

// spareBytesMax bounds the write buffer a client keeps for reuse (a huge request
// line does not pin its buffer).
const spareBytesMax = 256 << 10

func (c *Client) forget(id int64) {
	c.mu.Lock()
	delete(c.waiting, id)
	c.mu.Unlock()
}

// Error is a refusal from the gate. errors.Is matches it against the typed errors of
// impl/core and impl/proto (core.ErrUnknownRun, proto.ErrForbidden, ...).
type Error struct {
	Object proto.ErrorObject
}

func (e *Error) Error() string {
	return fmt.Sprintf("soundgate: %s (%s, code %d)", e.Object.Message, e.Object.Type, e.Object.Code)
}

// ErrorCode returns the contract's name of the error (data.type on the wire).
func (e *Error) ErrorCode() string { return e.Object.Type }

// Unwrap returns the typed sentinel for errors.Is.
func (e *Error) Unwrap() error { return e.Object.Err() }

// Open opens run (an operator's call); timeout 0 means no deadline. A positive
// timeout under 1 ms is 1 ms (whole milliseconds on the wire: it must not become
// "never"); a negative one is an error.
func (c *Client) Open(ctx context.Context, run string, timeout time.Duration) (proto.OpenResult, error) {
	var res proto.OpenResult
	if timeout < 0 {
		return res, fmt.Errorf("soundgate/client: open %q: negative timeout %v", run, timeout)
	}
	ms := timeout.Milliseconds()
	if timeout > 0 && ms == 0 {
		ms = 1
	}
	err := c.call(ctx, &proto.Request{Method: proto.MethodOpen, Run: core.RunID(run), TimeoutMs: ms}, &res)
	return res, err
}

// AdmitOptions are the optional arguments of Admit.
type AdmitOptions struct {
	Gated bool          // the effect needs its own approval
	Wait  time.Duration // wait (bounded by the gate: at most proto.WaitMsMax ms) instead of answering held at once
	// Description says what the effect would do, for the approver (at most
	// proto.DescriptionBytesMax bytes; no control character but tab and line feed).
	// The gate keeps it with the approval a gated admit opens; it changes no answer.
	Description string
	// ArgsDigest is a digest of the effect's arguments, "sha256:" and 64 lower-case
	// hexadecimal digits (ArgsDigest computes one), kept with the description.
	ArgsDigest string
}

// ArgsDigest returns the args digest of b: "sha256:" and the SHA-256 of b in
// lower-case hexadecimal. Hash the effect's arguments in a canonical encoding (the
// JSON a tool call carries, say), so that the approver can check them.
func ArgsDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// waitMs is the wait_ms of an admit that waits up to d: whole milliseconds, a positive
// wait under 1 ms rounded up to 1 ms, a wait over proto.WaitMsMax clamped to it, a
// negative wait 0.
func waitMs(d time.Duration) int64 {
	switch {
	case d <= 0:
		return 0
	case d < time.Millisecond:
		return 1
	}
	return min(d.Milliseconds(), proto.WaitMsMax)
}

// Admit asks to perform effect key of run now, at epoch. With Wait, a held effect is
// answered when a decision, cancel, fence or timeout of the run changes its answer,
// or held when Wait runs out. Wait is clamped to proto.WaitMsMax milliseconds (a
// positive Wait under 1 ms waits 1 ms). The context should outlive Wait.
func (c *Client) Admit(ctx context.Context, run, key string, epoch uint64, o AdmitOptions) (proto.AdmitResult, error) {
	var res proto.AdmitResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodAdmit, Run: core.RunID(run), Key: core.Key(key),
		Epoch: epoch, Gated: o.Gated, WaitMs: waitMs(o.Wait), Description: o.Description, ArgsDigest: o.ArgsDigest}, &res)
	return res, err
}

const (
	// admitWaitMargin is how long before ctx's deadline an AdmitWait ask stops waiting
	// on the gate, so that its answer can travel back in time.
	admitWaitMargin = 50 * time.Millisecond
	// admitWaitStepMin is the shortest wait AdmitWait asks for after the first ask:
	// with less time left it returns the last answer rather than ask again.
	admitWaitStepMin = 5 * time.Millisecond
)

// AdmitWait asks until the answer is not held or ctx ends, waiting on the gate between
// asks (each ask waits up to waitStep; waitStep <= 0 means the gate's longest wait,
// proto.WaitMsMax ms). It returns the last answer. When ctx has a deadline, each ask
// stops waiting admitWaitMargin before it, and once less than a further
// admitWaitStepMin remains AdmitWait returns the last (held) answer instead of asking
// again.
func (c *Client) AdmitWait(ctx context.Context, run, key string, epoch uint64, gated bool, waitStep time.Duration) (proto.AdmitResult, error) {
	if waitStep <= 0 {
		waitStep = proto.WaitMsMax * time.Millisecond
	}
	var last proto.AdmitResult
	for asked := false; ; asked = true {
		wait := waitStep
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl) - admitWaitMargin
			switch {
			case left >= admitWaitStepMin:
				wait = min(wait, left)
			case asked:
				return last, nil
			default:
				wait = 0 // the first ask, with little time left: answered at once
			}
		}
		res, err := c.Admit(ctx, run, key, epoch, AdmitOptions{Gated: gated, Wait: wait})
		if err != nil || res.Answer != core.AnswerHeld {
			return res, err
		}
		if ctx.Err() != nil {
			return res, nil
		}
		last = res
	}
}

// Decide approves or rejects key's pending approval (an approver's call).
func (c *Client) Decide(ctx context.Context, run, key string, d core.Decision) (proto.DecideResult, error) {
	return c.DecideWith(ctx, run, key, d, DecideOptions{})
}

// DecideOptions are the optional arguments of DecideWith.
type DecideOptions struct {
	// Reason says why, kept with the decided effect (status returns it); at most
	// proto.ReasonBytesMax bytes, no control character but tab and line feed.
	Reason string
}

// DecideWith is Decide with options: a reason.
func (c *Client) DecideWith(ctx context.Context, run, key string, d core.Decision, o DecideOptions) (proto.DecideResult, error) {
	var res proto.DecideResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodDecide, Run: core.RunID(run), Key: core.Key(key), Decision: d, Reason: o.Reason}, &res)
	return res, err
}

// PendingOptions are the optional arguments of Pending.
type PendingOptions struct {
	Limit  int    // the most approvals to list; 0: the gate's default (proto.PendingLimitDefault)
	Cursor string // list after this place: the Cursor of the page before ("": from the oldest)
}

// Pending lists a page of the pending approvals the token may decide, oldest first
// (an approver's or an operator's call). When res.More is set, the next page is
// Pending with res.Cursor. A limit over proto.PendingLimitMax is clamped to it.
func (c *Client) Pending(ctx context.Context, o PendingOptions) (proto.PendingResult, error) {
	var res proto.PendingResult
	if o.Limit < 0 {
		return res, fmt.Errorf("soundgate/client: pending: negative limit %d", o.Limit)
	}
	err := c.call(ctx, &proto.Request{Method: proto.MethodPending, Limit: int64(min(o.Limit, proto.PendingLimitMax)), Cursor: o.Cursor}, &res)
	return res, err
}

// Complete records the outcome of an admitted effect.
func (c *Client) Complete(ctx context.Context, run, key string, o core.Outcome, result string) (proto.CompleteResult, error) {
	var res proto.CompleteResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodComplete, Run: core.RunID(run), Key: core.Key(key), Outcome: o, Result: result}, &res)
	return res, err
}

// Cancel cancels run (an operator's call).
func (c *Client) Cancel(ctx context.Context, run string) (proto.CancelResult, error) {
	return c.CancelWith(ctx, run, RunOptions{})
}

// RunOptions are the optional arguments of CancelWith and FenceWith.
type RunOptions struct {
	// Reason says why, kept in the gate's audit trail; at most proto.ReasonBytesMax
	// bytes, no control character but tab and line feed.
	Reason string
}

// CancelWith is Cancel with options: a reason.
func (c *Client) CancelWith(ctx context.Context, run string, o RunOptions) (proto.CancelResult, error) {
	var res proto.CancelResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodCancel, Run: core.RunID(run), Reason: o.Reason}, &res)
	return res, err
}

// Fence moves run to a new epoch (an operator's call).
func (c *Client) Fence(ctx context.Context, run string) (proto.FenceResult, error) {
	return c.FenceWith(ctx, run, RunOptions{})
}

// FenceWith is Fence with options: a reason.
func (c *Client) FenceWith(ctx context.Context, run string, o RunOptions) (proto.FenceResult, error) {
	var res proto.FenceResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodFence, Run: core.RunID(run), Reason: o.Reason}, &res)
	return res, err
}

// Status reads run and, if key is not empty, one of its effects.
func (c *Client) Status(ctx context.Context, run, key string) (proto.StatusResult, error) {
	var res proto.StatusResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodStatus, Run: core.RunID(run), Key: core.Key(key)}, &res)
	return res, err
}
