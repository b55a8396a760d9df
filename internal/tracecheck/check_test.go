package tracecheck

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

func specSource(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../spec/tla/SoundGate.tla")
	require.NoError(t, err)
	return string(b)
}

// workload drives a durable node with random commands over a few runs and keys, with
// admits that wait for a decision, a clock that passes deadlines, and restarts of the
// node on its log; every line goes to trace. A restart whose recovery fails ends it,
// with the error, so that the trace up to there is checked first. Seeds above 8 retire
// with the watermark (Upto), over ids that order by generation first.
func workload(t *testing.T, seed uint64, steps int, trace *bytes.Buffer) (recoverErr error) {
	t.Helper()
	w := &driver{t: t, dir: filepath.Join(t.TempDir(), "data"), rng: rand.New(rand.NewPCG(seed, seed^0x9e37)), gen: map[string]int{},
		upto: seed > 8}
	w.cfg = node.Config{Now: func() core.Time { return core.Time(w.now.Load()) }, Trace: trace}
	require.NoError(t, w.start())
	for i := 0; i < steps; i++ {
		if err := w.step(); err != nil {
			return err
		}
	}
	w.n.Close()
	require.NoError(t, w.l.Close())
	return nil
}

// driver is a workload's state: the node, its log and clock, and the runs' names (a
// retired run's name is not reused: the next generation of it is).
type driver struct {
	t     *testing.T
	dir   string
	rng   *rand.Rand
	now   atomic.Int64
	cfg   node.Config
	n     *node.Node
	l     *wal.Log
	party *node.Party
	gen   map[string]int
	upto  bool // retire with the watermark, ids "g<generation>-<base>"
}

var (
	workloadRuns = []string{"alpha", "beta", "gamma"}
	workloadKeys = []core.Key{"send-mail", "pay", "delete-repo"}
)

// start recovers the node from its log.
func (w *driver) start() error {
	l, err := wal.Open(w.dir, wal.Options{})
	require.NoError(w.t, err)
	n, err := node.Recover(l, w.cfg)
	if err != nil {
		l.Close()
		return err
	}
	w.n, w.l, w.party = n, l, n.Join()
	return nil
}

// step takes one random step: a command, the clock moving, or a restart.
func (w *driver) step() error {
	base := workloadRuns[w.rng.IntN(len(workloadRuns))]
	r := core.RunID(fmt.Sprint(base, "-", w.gen[base]))
	if w.upto {
		r = core.RunID(fmt.Sprintf("g%03d-%s", w.gen[base], base))
	}
	var view core.RunView
	known := false
	w.n.Inspect(func(g *core.Gate) {
		if v, _, err := g.Status(r, ""); err == nil {
			view, known = v, true
		}
	})
	if view.Status.Final() && w.rng.IntN(3) > 0 { // a fleet moves on to new runs
		w.gen[base]++
		return nil
	}
	p := w.rng.IntN(100)
	if !known && w.rng.IntN(5) > 0 {
		p = 0 // mostly open a run before using it
	}
	switch {
	case p < 93:
		req := w.command(p, r, view)
		a := w.n.Apply(req)
		if !a.Parked && a.Err == nil {
			require.NoError(w.t, w.n.Durable(a.After))
		}
		if req.Cmd.Op == core.OpRetire && a.Err == nil && a.Reply.Run.Status == core.RunRetired {
			w.gen[base]++
		}
	case p < 97:
		w.now.Add(int64(w.rng.IntN(30)))
	default: // a restart: what is durable survives, the waiting admits do not
		w.n.Close()
		require.NoError(w.t, w.l.Close())
		return w.start()
	}
	return nil
}

// command draws a command on run r (view: its state now) by p, out of 0..92.
func (w *driver) command(p int, r core.RunID, view core.RunView) node.Request {
	rng := w.rng
	epoch := int(view.Epoch) + rng.IntN(3) - 1 // mostly current, sometimes stale or ahead
	c := core.Command{Run: r, Key: workloadKeys[rng.IntN(len(workloadKeys))], Epoch: uint64(max(epoch, 1))}
	req := node.Request{}
	switch {
	case p < 10:
		c.Op, c.Key, c.Epoch = core.OpOpen, "", 0
		if rng.IntN(5) == 0 {
			c.Deadline = core.Time(w.now.Load() + int64(rng.IntN(200)))
		}
	case p < 50:
		c.Op, c.Gated = core.OpAdmit, rng.IntN(2) == 0
		if rng.IntN(2) == 0 {
			req = node.Request{Wait: time.Hour, Party: w.party, Done: func(node.Answer) {}}
		}
	case p < 66:
		c.Op, c.Decision, c.Epoch = core.OpDecide, core.Decision(1+rng.IntN(2)), 0
		if len(view.Pending) > 0 && rng.IntN(4) > 0 {
			c.Key = view.Pending[rng.IntN(len(view.Pending))]
		}
	case p < 82:
		c.Op, c.Outcome, c.Result, c.Epoch = core.OpComplete, core.Outcome(1+rng.IntN(2)), "done", 0
	case p < 85:
		c.Op, c.Key, c.Epoch = core.OpCancel, "", 0
	case p < 90:
		c.Op, c.Key, c.Epoch = core.OpFence, "", 0
	default:
		c.Op, c.Key, c.Epoch, c.Upto = core.OpRetire, "", 0, w.upto && rng.IntN(2) == 0
	}
	req.Cmd = c
	return req
}

// TestTracesOfTheNodeValidate: random workloads of a durable node, restarts
// included, replay against the spec to their end.
func TestTracesOfTheNodeValidate(t *testing.T) {
	src := specSource(t)
	for seed := uint64(1); seed <= 12; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			var trace bytes.Buffer
			recoverErr := workload(t, seed, 2000, &trace)
			res, err := Check(src, trace.String())
			require.NoError(t, err)
			require.Nil(t, res.Mismatch, "%v\n%s", res.Mismatch, around(trace.String(), res.Mismatch))
			require.NoError(t, recoverErr)
			require.Greater(t, res.Recoveries, 0)
			require.Greater(t, res.Deliveries, 0)
			t.Log(res.Summary())
			t.Log(res.Answers)
		})
	}
}

func around(trace string, m *Mismatch) string {
	if m == nil {
		return ""
	}
	lines := strings.Split(trace, "\n")
	from := max(0, m.Line-6)
	return strings.Join(lines[from:min(len(lines), m.Line)], "\n")
}

// TestTracesCatchBrokenGates: the negative controls. Each deliberately broken build
// of the core (impl/core/broken.go) and of the node's wake path (impl/node/broken.go)
// runs the workloads above, and trace validation must find a mismatch in it.
func TestTracesCatchBrokenGates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds five broken variants") // -short is never what make test or make verify runs
	}
	mismatch := regexp.MustCompile(`Messages:\s+trace line \d+: (.*)`)
	tags := []string{"broken_p1", "broken_p2", "broken_p3", "broken_p4", "broken_wake"}
	var caught atomic.Int32
	t.Cleanup(func() { // after the parallel subtests
		t.Logf("trace validation negative controls: %d of %d broken builds caught (%s)", caught.Load(), len(tags), strings.Join(tags, ", "))
	})
	for _, tag := range tags {
		t.Run(tag, func(t *testing.T) {
			t.Parallel()
			out, err := exec.Command("go", "test", "-count=1", "-tags", tag, "-run", "^TestTracesOfTheNodeValidate$", ".").CombinedOutput()
			require.Error(t, err, "the %s build passed trace validation:\n%s", tag, out)
			m := mismatch.FindStringSubmatch(string(out))
			require.NotNil(t, m, "the %s build failed, but not with a mismatch:\n%s", tag, out)
			caught.Add(1)
			t.Logf("%s: caught: %s", tag, m[1])
		})
	}
}

// TestTamperedTracesAreCaught: edits of a valid trace, each of a kind a broken shell
// could produce, and the mismatch or error each must give; a line torn by a crash is
// dropped and counted, not a mismatch.
func TestTamperedTracesAreCaught(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, workload(t, 3, 600, &buf))
	trace := buf.String()
	lines := strings.Split(trace, "\n")
	first := func(pred func(string) bool) int {
		for i, l := range lines {
			if pred(l) {
				return i
			}
		}
		t.Fatal("no such line in the trace")
		return -1
	}
	edit := func(i int, f func(string) string) string {
		out := append([]string(nil), lines...)
		out[i] = f(out[i])
		return strings.Join(out, "\n")
	}
	laterStart := first(func(l string) bool {
		return strings.HasPrefix(l, `{"recovered":`) && !strings.HasPrefix(l, `{"recovered":0,`)
	})
	withView := first(func(l string) bool {
		return strings.Contains(l, `"op":"admit"`) && strings.Contains(l, `"answer":"held"`)
	})
	delivered := first(func(l string) bool {
		return strings.HasPrefix(l, `{"deliver":`) && strings.Contains(l, `"answer":"held"`)
	})
	for _, tc := range []struct {
		name, trace, want string
	}{
		{"a step's answer", edit(withView, func(l string) string { return strings.Replace(l, `"answer":"held"`, `"answer":"admit"`, 1) }), "the gate answered admit, the spec held"},
		{"a view", edit(withView, func(l string) string { return strings.Replace(l, `"status":"held"`, `"status":"released"`, 1) }), `status: spec "held", gate "released"`},
		{"a delivered answer", edit(delivered, func(l string) string { return strings.Replace(l, `"answer":"held"`, `"answer":"duplicate"`, 1) }), "the answer handed back for step"},
		{"a persisted flag", edit(withView, func(l string) string { return strings.Replace(l, `"persist":true,`, ``, 1) }), "the gate persisted false"},
		{"a start past the durable records", edit(laterStart, func(l string) string { return strings.Replace(l, `{"recovered":`, `{"recovered":99999`, 1) }), "which no persisted step of the trace wrote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NotEqual(t, trace, tc.trace, "the edit changed nothing")
			res, err := Check(specSource(t), tc.trace)
			require.NoError(t, err)
			require.NotNil(t, res.Mismatch)
			require.Contains(t, res.Mismatch.What, tc.want)
		})
	}
	t.Run("a line torn by a crash", func(t *testing.T) {
		torn := edit(laterStart-1, func(l string) string { return l[:len(l)/2] })
		res, err := Check(specSource(t), torn)
		require.NoError(t, err)
		require.Equal(t, 1, res.Torn)
	})
	t.Run("a torn line that is not the last of its process", func(t *testing.T) {
		_, err := Check(specSource(t), edit(withView, func(l string) string { return l[:len(l)/2] }))
		require.ErrorContains(t, err, "trace line")
	})
	t.Run("a trace that starts on a log with records", func(t *testing.T) {
		_, err := Check(specSource(t), strings.Join(lines[laterStart:], "\n"))
		require.ErrorContains(t, err, "trace a gate from an empty data directory")
	})
}
