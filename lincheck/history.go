package lincheck

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/model"
)

// Shape is the shape of one history: how many clients, runs and keys, and how the
// requests are timed out.
type Shape struct {
	Clients       int           // concurrent clients; each sends one request at a time
	OpsPerClient  int           // requests each client sends
	Runs          int           // runs of the history (the partitions)
	Keys          int           // keys per run, at most KeysMax
	OpTimeout     time.Duration // a request not answered within this is an unknown outcome
	ShortTimeouts float64       // fraction of requests sent with a timeout of microseconds
}

// DefaultShape is the shape of the verify campaign's histories.
func DefaultShape() Shape {
	return Shape{Clients: 6, OpsPerClient: 30, Runs: 3, Keys: 3, OpTimeout: 5 * time.Second, ShortTimeouts: 0.03}
}

// shortTimeoutMax bounds the timeout of a request sent with a short timeout: short
// enough that some are answered too late and become unknown outcomes.
const shortTimeoutMax = 400 * time.Microsecond

// redialDelay is the pause between connection attempts while the server is down.
const redialDelay = 5 * time.Millisecond

// contractErrors are the error names of the contract: an answer with one of them is a
// definite answer (the request changed nothing). Any other refusal (unavailable,
// shutting_down, overloaded) is treated as an unknown outcome.
var contractErrors = map[string]bool{
	model.ErrUnknownRun: true, model.ErrBadEpoch: true, model.ErrNotPending: true,
	model.ErrNotAdmitted: true, model.ErrConflict: true, model.ErrRunFinal: true,
	model.ErrRunRetired: true, model.ErrInvalidArgument: true,
}

// History is one recorded history, ready for the checker.
type History struct {
	Seed     uint64
	Keys     []string
	Ops      []porcupine.Operation // the operations to check
	Requests int                   // requests sent: Ops and the unanswered status reads left out of them
	Unknown  int                   // requests with an unknown outcome
}

// recorder collects the operations of one history, with times relative to its start.
type recorder struct {
	start    time.Time
	mu       sync.Mutex
	ops      []porcupine.Operation
	clientID int
}

func (r *recorder) now() int64 { return time.Since(r.start).Nanoseconds() }

func (r *recorder) newClient() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	id := r.clientID
	r.clientID++
	return id
}

func (r *recorder) add(op porcupine.Operation) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// target is where clients connect: the server's two addresses.
type target struct {
	tcp, unix string
}

// worker is one client of a history: three connections (one per role), each dialled
// over TCP or the Unix socket at random, and the epochs it has seen per run.
type worker struct {
	rng    *rand.Rand
	tgt    target
	shape  Shape
	runs   []string
	keys   []string
	conns  map[proto.Role]*client.Client
	epochs map[string]int
}

func (w *worker) conn(ctx context.Context, role proto.Role) (*client.Client, error) {
	if c := w.conns[role]; c != nil {
		return c, nil
	}
	token := map[proto.Role]string{proto.RoleAgent: servertest.AgentToken, proto.RoleApprover: servertest.ApproverToken, proto.RoleOperator: servertest.OperatorToken}[role]
	for {
		addr := w.tgt.tcp
		if w.rng.IntN(2) == 0 {
			addr = "unix:" + w.tgt.unix
		}
		dctx, cancel := context.WithTimeout(ctx, time.Second)
		c, err := client.Dial(dctx, addr, token)
		cancel()
		if err == nil {
			w.conns[role] = c
			return c, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(redialDelay):
		}
	}
}

func (w *worker) drop(role proto.Role) {
	if c := w.conns[role]; c != nil {
		c.Close()
		delete(w.conns, role)
	}
}

func (w *worker) closeAll() {
	for role := range w.conns {
		w.drop(role)
	}
}

// next draws the next request.
func (w *worker) next() Input {
	in := Input{Run: w.runs[w.rng.IntN(len(w.runs))], Key: w.rng.IntN(len(w.keys))}
	switch p := w.rng.IntN(100); {
	case p < 8:
		in.Action = model.ActOpen
	case p < 48:
		in.Action = model.ActAdmit
		in.Gated = w.rng.IntN(2) == 0
		e := max(w.epochs[in.Run], 1)
		switch q := w.rng.IntN(20); {
		case q < 2:
			e--
		case q < 4:
			e++
		case q < 5:
			e = 1
		}
		in.Epoch = max(e, 1)
	case p < 66:
		in.Action = model.ActDecide
		in.Decision = model.Approve
		if w.rng.IntN(10) < 3 {
			in.Decision = model.Reject
		}
	case p < 80:
		in.Action = model.ActComplete
		in.Outcome = model.OK
		if w.rng.IntN(5) == 0 {
			in.Outcome = model.Failed
		}
	case p < 95:
		in.Action = ActStatus
	case p < 99:
		in.Action = model.ActFence
	default:
		in.Action = model.ActCancel
	}
	return in
}

func roleOf(action string) proto.Role {
	switch action {
	case model.ActAdmit, model.ActComplete, ActStatus:
		return proto.RoleAgent
	case model.ActDecide:
		return proto.RoleApprover
	}
	return proto.RoleOperator
}

// do sends in on c and maps the answer onto an Output. A transport error, a timeout
// or a refusal that is not a contract error is an unknown outcome; broken reports a
// connection that must be dialled again.
func (w *worker) do(ctx context.Context, c *client.Client, in Input) (out Output, broken bool) {
	out, err := w.send(ctx, c, in)
	if err != nil {
		return errorOutput(err)
	}
	if out.Epoch > 0 {
		w.epochs[in.Run] = out.Epoch
	}
	return out, false
}

// send calls the client method of in's action and maps its result onto an Output.
func (w *worker) send(ctx context.Context, c *client.Client, in Input) (out Output, err error) {
	key := w.keys[in.Key]
	switch in.Action {
	case model.ActOpen:
		var r proto.OpenResult
		if r, err = c.Open(ctx, in.Run, 0); err == nil {
			out = Output{Status: r.Status.String(), Epoch: int(r.Epoch), Created: r.Created}
		}
	case model.ActAdmit:
		var r proto.AdmitResult
		if r, err = c.Admit(ctx, in.Run, key, uint64(in.Epoch), client.AdmitOptions{Gated: in.Gated}); err == nil {
			out = Output{Admit: r.Answer.String(), Reason: r.Reason.String(), Outcome: r.Outcome.String(), Epoch: int(r.Epoch)}
		}
	case model.ActDecide:
		d := core.Approve
		if in.Decision == model.Reject {
			d = core.Reject
		}
		var r proto.DecideResult
		if r, err = c.Decide(ctx, in.Run, key, d); err == nil {
			out = Output{Repeat: r.Repeat}
		}
	case model.ActComplete:
		o := core.OutcomeOK
		if in.Outcome == model.Failed {
			o = core.OutcomeFailed
		}
		var r proto.CompleteResult
		if r, err = c.Complete(ctx, in.Run, key, o, ""); err == nil {
			out = Output{Repeat: r.Repeat}
		}
	case model.ActCancel:
		var r proto.CancelResult
		if r, err = c.Cancel(ctx, in.Run); err == nil {
			out = Output{Status: r.Status.String(), Epoch: int(r.Epoch)}
		}
	case model.ActFence:
		var r proto.FenceResult
		if r, err = c.Fence(ctx, in.Run); err == nil {
			out = Output{Epoch: int(r.Epoch)}
		}
	case ActStatus:
		var r proto.StatusResult
		if r, err = c.Status(ctx, in.Run, key); err == nil {
			out = w.statusOutput(r)
		}
	}
	return out, err
}

// statusOutput maps a status answer onto an Output, the pending keys as a bit set
// over the history's keys.
func (w *worker) statusOutput(r proto.StatusResult) Output {
	out := Output{Status: r.Status.String(), Epoch: int(r.Epoch)}
	for _, p := range r.Pending {
		if i := slices.Index(w.keys, string(p)); i >= 0 {
			out.Pending |= 1 << i
		} else {
			out.Pending |= 1 << 63 // a key this history never used: never matches
		}
	}
	if e := r.Effect; e != nil {
		out.EffStatus, out.EffEpoch, out.EffGated, out.EffApprv = e.Status.String(), int(e.Epoch), e.Gated, e.Approved
		out.Outcome = e.Outcome.String()
	}
	return out
}

// errorOutput maps a failed request onto an Output: a contract error is a definite
// answer, anything else an unknown outcome; broken reports a connection that must be
// dialled again.
func errorOutput(err error) (out Output, broken bool) {
	var ce *client.Error
	switch {
	case errors.As(err, &ce) && contractErrors[ce.ErrorCode()]:
		return Output{Err: ce.ErrorCode()}, false
	case errors.As(err, &ce):
		// unavailable, shutting_down, overloaded: answered, so whatever it did is done.
		return Output{Unknown: true}, false
	case errors.Is(err, context.DeadlineExceeded):
		return Output{Unknown: true, Unbounded: true}, false
	}
	return Output{Unknown: true}, true
}

// runHistory drives one history against tgt and returns it. It stops early, with
// what it recorded so far, when ctx ends.
func runHistory(ctx context.Context, tgt target, shape Shape, prefix string, seed uint64) History {
	rec := &recorder{start: time.Now()}
	runs := make([]string, shape.Runs)
	for i := range runs {
		runs[i] = fmt.Sprintf("%s-r%d", prefix, i)
	}
	keys := KeyNames(shape.Keys)
	var wg sync.WaitGroup
	for i := range shape.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{rng: rand.New(rand.NewPCG(seed, uint64(i)+1)), tgt: tgt, shape: shape, runs: runs, keys: keys,
				conns: map[proto.Role]*client.Client{}, epochs: map[string]int{}}
			defer w.closeAll()
			id := rec.newClient()
			for range shape.OpsPerClient {
				in := w.next()
				role := roleOf(in.Action)
				c, err := w.conn(ctx, role)
				if err != nil {
					return
				}
				timeout := shape.OpTimeout
				if w.rng.Float64() < shape.ShortTimeouts {
					timeout = time.Duration(w.rng.Int64N(int64(shortTimeoutMax))) + time.Microsecond
				}
				octx, cancel := context.WithTimeout(ctx, timeout)
				call := rec.now()
				out, broken := w.do(octx, c, in)
				ret := rec.now()
				cancel()
				rec.add(porcupine.Operation{ClientId: id, Input: in, Call: call, Output: out, Return: ret})
				if broken {
					w.drop(role)
				}
				if out.Unbounded {
					// The request may still take effect later: it stays open (its
					// return is set past the end), so this client goes on under a new
					// id to keep each id's requests sequential.
					id = rec.newClient()
				}
			}
		}()
	}
	wg.Wait()
	h := History{Seed: seed, Keys: keys, Requests: len(rec.ops)}
	for _, op := range rec.ops {
		if out := op.Output.(Output); out.Unknown {
			h.Unknown++
			if op.Input.(Input).Action == ActStatus {
				continue // a read that never answered: it constrains nothing
			}
		}
		h.Ops = append(h.Ops, op)
	}
	closeUnknown(h.Ops)
	return h
}

// closeUnknown sets the return time of every operation whose unknown outcome is
// unbounded past the end of the history (the same, for the checker, as never
// returning).
func closeUnknown(ops []porcupine.Operation) {
	var end int64
	for _, op := range ops {
		end = max(end, op.Return, op.Call)
	}
	for i := range ops {
		if ops[i].Output.(Output).Unbounded {
			ops[i].Return = end + 1
		}
	}
}
