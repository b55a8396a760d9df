package node_test

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/internal/scenario"
)

// gatePending is what the core holds pending, counted run by run.
func gatePending(n *node.Node) int {
	var p int
	n.Inspect(func(g *core.Gate) { p = g.Pending() })
	return p
}

// pendingDriver is nodeDriver that checks, after every command and timeout, that
// the node's count of pending approvals is the core's.
type pendingDriver struct {
	*nodeDriver
	t *testing.T
}

func (d pendingDriver) check(what string) {
	d.t.Helper()
	require.Equal(d.t, gatePending(d.n), d.n.Pending(), "pending approvals after %s", what)
}

func (d pendingDriver) Step(c core.Command) core.Reply {
	rep := d.nodeDriver.Step(c)
	d.check(fmt.Sprintf("%s %s %s", c.Op, c.Run, c.Key))
	return rep
}

func (d pendingDriver) TimeoutDue() []core.RunID {
	rs := d.nodeDriver.TimeoutDue()
	d.check("timeouts")
	return rs
}

func (d pendingDriver) Retire(c core.Command) core.Reply {
	rep := d.nodeDriver.Retire(c)
	d.check("retire " + string(c.Run))
	return rep
}

// TestPendingCount: the node's count of pending approvals (what /metrics reports)
// is the core's after every step: of every scenario of the contract, of a random
// walk over few runs and keys with waiting admits, and after a recovery.
func TestPendingCount(t *testing.T) {
	t.Run("scenarios", func(t *testing.T) {
		scenario.Run(t, "../../"+scenario.Dir, func(t *testing.T) scenario.Driver {
			return pendingDriver{newNodeDriver(t).(*nodeDriver), t}
		})
	})
	for _, seed := range []uint64{1, 2, 3} {
		t.Run(fmt.Sprint("random walk and recovery, seed ", seed), func(t *testing.T) { pendingWalk(t, seed) })
	}
}

// pendingWalk is TestPendingCount's random walk from seed (fixed, so that a failure
// can be replayed).
func pendingWalk(t *testing.T, seed uint64) {
	{
		rng := rand.New(rand.NewPCG(seed, 0))
		dir := filepath.Join(t.TempDir(), "data")
		l, err := wal.Open(dir, wal.Options{})
		require.NoError(t, err)
		require.NoError(t, l.Replay(nil, nil))
		var now atomic.Int64 // the deadline timer reads it on its own goroutine
		now.Store(1)
		clock := func() core.Time { return core.Time(now.Load()) }
		n := node.New(node.Config{Log: l, Now: clock})
		p := n.Join()
		runs := []core.RunID{"a", "b", "c", "d", "e", "f"}
		keys := []core.Key{"k1", "k2", "k3", "k4"}
		epochs := map[core.RunID]uint64{}
		for _, r := range runs { // open, so that the walk's admits and decisions act from its first step
			a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: r}})
			require.NoError(t, a.Err)
		}
		most := 0 // the most approvals pending at once: the walk is not vacuous
		for i := range 2000 {
			r, k := runs[rng.IntN(len(runs))], keys[rng.IntN(len(keys))]
			c := core.Command{Run: r, Key: k, Epoch: max(epochs[r], 1)}
			req := node.Request{}
			switch x := rng.IntN(20); {
			case x < 2: // a new run in a slot of the walk's runs, so that finished ones give way
				r = core.RunID(fmt.Sprint("r", i))
				runs[rng.IntN(len(runs))] = r
				c.Run, c.Op, c.Key, c.Epoch = r, core.OpOpen, "", 1
				if rng.IntN(4) == 0 { // a deadline, which a later step may pass
					c.Deadline = clock() + 50 + core.Time(rng.IntN(500))
				}
			case x < 9:
				c.Op, c.Gated = core.OpAdmit, rng.IntN(3) == 0
				if rng.IntN(4) == 0 {
					req.Wait, req.Party, req.Done = time.Hour, p, func(node.Answer) {}
				}
			case x < 14:
				c.Op, c.Decision = core.OpDecide, core.Decision(1+rng.IntN(2))
			case x < 15:
				c.Op, c.Key = core.OpCancel, ""
			case x < 17:
				c.Op, c.Key = core.OpFence, ""
			case x < 18:
				c.Op, c.Outcome = core.OpComplete, core.OutcomeOK
			default:
				now.Add(int64(rng.IntN(20)))
				n.TimeoutDue()
				c.Op, c.Key = core.OpStatus, ""
			}
			req.Cmd = c
			a := n.Apply(req)
			if c.Op == core.OpFence && a.Err == nil {
				epochs[r] = a.Reply.Run.Epoch
			}
			require.Equal(t, gatePending(n), n.Pending(), "step %d: %s %s %s (seed %d)", i, c.Op, r, c.Key, seed)
			most = max(most, n.Pending())
		}
		require.GreaterOrEqual(t, most, 2, "the walk never had two approvals pending (seed %d)", seed)
		want := n.Pending()
		n.Leave(p)
		n.Close()
		require.NoError(t, l.Close())
		l, err = wal.Open(dir, wal.Options{})
		require.NoError(t, err)
		defer l.Close()
		n, err = node.Recover(l, node.Config{Now: clock})
		require.NoError(t, err)
		defer n.Close()
		require.Equal(t, want, n.Pending(), "after recovery (seed %d)", seed)
		require.Equal(t, gatePending(n), n.Pending())
	}
}
