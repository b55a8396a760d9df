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
package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// ErrClosed is returned by calls on a closed client or a broken connection.
var ErrClosed = errors.New("soundgate/client: connection closed")

// Client is one authenticated connection to a gate.
type Client struct {
	nc   net.Conn
	Role proto.Role // the role the server granted the token

	wmu sync.Mutex // serialises writes
	buf []byte

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan proto.Response
	err     error // sticky: set when the connection broke
}

// Dial connects to a gate at addr and says hello with token. addr is "unix:/path",
// a path starting with "/", or "host:port" for TCP.
func Dial(ctx context.Context, addr, token string) (*Client, error) {
	network, address := "tcp", addr
	switch {
	case strings.HasPrefix(addr, "unix:"):
		network, address = "unix", strings.TrimPrefix(addr, "unix:")
	case strings.HasPrefix(addr, "/"):
		network = "unix"
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, fmt.Errorf("soundgate/client: dial %s: %w", addr, err)
	}
	c := &Client{nc: nc, waiting: map[int64]chan proto.Response{}}
	go c.readLoop()
	var hello proto.HelloResult
	if err := c.call(ctx, &proto.Request{Method: proto.MethodHello, Version: proto.Version, Token: token}, &hello); err != nil {
		nc.Close()
		return nil, err
	}
	c.Role = hello.Role
	return c, nil
}

// Close closes the connection; calls in flight return ErrClosed.
func (c *Client) Close() error { return c.nc.Close() }

func (c *Client) readLoop() {
	r := proto.NewReader(c.nc)
	for {
		line, err := r.ReadLine()
		if err != nil {
			c.broken(err)
			return
		}
		resp, err := proto.DecodeResponse(line)
		if err != nil {
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

func (c *Client) broken(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = fmt.Errorf("%w: %w", ErrClosed, err) // both testable with errors.Is
	}
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
}

// call sends req and decodes the result into out.
func (c *Client) call(ctx context.Context, req *proto.Request, out json.Unmarshaler) error {
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

	c.wmu.Lock()
	c.buf = proto.AppendRequest(c.buf[:0], req)
	if dl, ok := ctx.Deadline(); ok {
		c.nc.SetWriteDeadline(dl)
	} else {
		c.nc.SetWriteDeadline(time.Time{})
	}
	_, err := c.nc.Write(c.buf)
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		return fmt.Errorf("%w: %w", ErrClosed, err)
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

// Open opens run (an operator's call); timeout 0 means no deadline.
func (c *Client) Open(ctx context.Context, run string, timeout time.Duration) (proto.OpenResult, error) {
	var res proto.OpenResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodOpen, Run: core.RunID(run), TimeoutMs: timeout.Milliseconds()}, &res)
	return res, err
}

// AdmitOptions are the optional arguments of Admit.
type AdmitOptions struct {
	Gated bool          // the effect needs its own approval
	Wait  time.Duration // wait (bounded by the gate) instead of answering held at once
}

// Admit asks to perform effect key of run now, at epoch. With Wait, a held effect is
// answered when a decision, cancel, fence or timeout of the run changes its answer,
// or held when Wait runs out. The context should outlive Wait.
func (c *Client) Admit(ctx context.Context, run, key string, epoch uint64, o AdmitOptions) (proto.AdmitResult, error) {
	var res proto.AdmitResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodAdmit, Run: core.RunID(run), Key: core.Key(key),
		Epoch: epoch, Gated: o.Gated, WaitMs: o.Wait.Milliseconds()}, &res)
	return res, err
}

// AdmitWait asks until the answer is not held or ctx ends, waiting on the gate between
// asks (each ask waits up to waitStep). It returns the last answer.
func (c *Client) AdmitWait(ctx context.Context, run, key string, epoch uint64, gated bool, waitStep time.Duration) (proto.AdmitResult, error) {
	for {
		wait := waitStep
		if dl, ok := ctx.Deadline(); ok {
			wait = min(wait, time.Until(dl)-50*time.Millisecond)
		}
		if wait < time.Millisecond {
			wait = time.Millisecond
		}
		res, err := c.Admit(ctx, run, key, epoch, AdmitOptions{Gated: gated, Wait: wait})
		if err != nil || res.Answer != core.AnswerHeld {
			return res, err
		}
		if ctx.Err() != nil {
			return res, nil
		}
	}
}

// Decide approves or rejects key's pending approval (an approver's call).
func (c *Client) Decide(ctx context.Context, run, key string, d core.Decision) (proto.DecideResult, error) {
	var res proto.DecideResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodDecide, Run: core.RunID(run), Key: core.Key(key), Decision: d}, &res)
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
	var res proto.CancelResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodCancel, Run: core.RunID(run)}, &res)
	return res, err
}

// Fence moves run to a new epoch (an operator's call).
func (c *Client) Fence(ctx context.Context, run string) (proto.FenceResult, error) {
	var res proto.FenceResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodFence, Run: core.RunID(run)}, &res)
	return res, err
}

// Status reads run and, if key is not empty, one of its effects.
func (c *Client) Status(ctx context.Context, run, key string) (proto.StatusResult, error) {
	var res proto.StatusResult
	err := c.call(ctx, &proto.Request{Method: proto.MethodStatus, Run: core.RunID(run), Key: core.Key(key)}, &res)
	return res, err
}
