package core_test

import (
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
)

// TestCoreIsPure holds the core to its design: no I/O, no clock, no randomness, no locks.
func TestCoreIsPure(t *testing.T) {
	forbidden := map[string]bool{"time": true, "math/rand": true, "math/rand/v2": true, "os": true,
		"net": true, "sync": true, "io": true, "syscall": true, "unsafe": true, "log": true}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range pf.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			require.Falsef(t, forbidden[path], "%s imports %s: the core must stay pure", f, path)
		}
		checked++
	}
	require.Greater(t, checked, 3)
}

func small() core.Limits {
	return core.Limits{RunsMax: 2, KeysPerRunMax: 2, PendingPerRunMax: 1, RunBytesMax: 4, KeyBytesMax: 4, ResultBytesMax: 3}
}

// TestLimits: every limit is a typed error that changes nothing.
func TestLimits(t *testing.T) {
	cases := []struct {
		name  string
		setup []core.Command
		cmd   core.Command
		want  error
	}{
		{"run id too long", nil, core.Command{Op: core.OpOpen, Run: "toolong"}, core.ErrRunTooLong},
		{"empty run id", nil, core.Command{Op: core.OpOpen}, core.ErrInvalid},
		{"negative deadline", nil, core.Command{Op: core.OpOpen, Run: "r", Deadline: -1}, core.ErrInvalid},
		{"too many runs", []core.Command{{Op: core.OpOpen, Run: "a"}, {Op: core.OpOpen, Run: "b"}},
			core.Command{Op: core.OpOpen, Run: "c"}, core.ErrTooManyRuns},
		{"too many runs by tombstone", []core.Command{{Op: core.OpOpen, Run: "a"}, {Op: core.OpOpen, Run: "b"}},
			core.Command{Op: core.OpCancel, Run: "c"}, core.ErrTooManyRuns},
		{"key too long", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "kkkkk", Epoch: 1}, core.ErrKeyTooLong},
		{"too many keys", []core.Command{{Op: core.OpOpen, Run: "r"},
			{Op: core.OpAdmit, Run: "r", Key: "a", Epoch: 1}, {Op: core.OpAdmit, Run: "r", Key: "b", Epoch: 1}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "c", Epoch: 1}, core.ErrTooManyKeys},
		{"too many pending", []core.Command{{Op: core.OpOpen, Run: "r"},
			{Op: core.OpAdmit, Run: "r", Key: "a", Epoch: 1, Gated: true}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "b", Epoch: 1, Gated: true}, core.ErrTooManyPending},
		{"result too long", []core.Command{{Op: core.OpOpen, Run: "r"}, {Op: core.OpAdmit, Run: "r", Key: "a", Epoch: 1}},
			core.Command{Op: core.OpComplete, Run: "r", Key: "a", Outcome: core.OutcomeOK, Result: "abcd"}, core.ErrResultTooLong},
		{"empty key", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpAdmit, Run: "r", Epoch: 1}, core.ErrInvalid},
		{"epoch zero", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 0}, core.ErrInvalid},
		{"bad decision", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpDecide, Run: "r", Key: "a"}, core.ErrInvalid},
		{"bad outcome", []core.Command{{Op: core.OpOpen, Run: "r"}},
			core.Command{Op: core.OpComplete, Run: "r", Key: "a"}, core.ErrInvalid},
		{"unknown op", nil, core.Command{Op: 99, Run: "r"}, core.ErrInvalid},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := core.New(small())
			for _, c := range tc.setup {
				require.NoError(t, g.Step(c).Err)
			}
			before, _ := g.MarshalBinary()
			rep := g.Step(tc.cmd)
			require.ErrorIs(t, rep.Err, tc.want)
			require.False(t, rep.Persist, "a refused command must not ask to be persisted")
			after, _ := g.MarshalBinary()
			require.Equal(t, before, after, "a refused command changed the state")
		})
	}
}

// TestStepFlags: Persist is set exactly when the state changed, Wake when parked admits
// of the run may get another answer.
func TestStepFlags(t *testing.T) {
	g := core.New(core.DefaultLimits())
	steps := []struct {
		cmd           core.Command
		persist, wake bool
	}{
		{core.Command{Op: core.OpOpen, Run: "r", Deadline: 50}, true, false},
		{core.Command{Op: core.OpOpen, Run: "r"}, false, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true}, true, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "g", Epoch: 1, Gated: true}, false, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "s", Epoch: 1}, true, false},
		{core.Command{Op: core.OpStatus, Run: "r", Key: "s"}, false, false},
		{core.Command{Op: core.OpDecide, Run: "r", Key: "g", Decision: core.Approve}, true, true},
		{core.Command{Op: core.OpDecide, Run: "r", Key: "g", Decision: core.Approve}, false, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "s", Epoch: 1}, true, false},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "s", Epoch: 1}, false, false},
		{core.Command{Op: core.OpComplete, Run: "r", Key: "s", Outcome: core.OutcomeOK}, true, false},
		{core.Command{Op: core.OpComplete, Run: "r", Key: "s", Outcome: core.OutcomeOK}, false, false},
		{core.Command{Op: core.OpFence, Run: "r"}, true, true},
		{core.Command{Op: core.OpAdmit, Run: "r", Key: "x", Epoch: 2, Now: 50}, true, true},
		{core.Command{Op: core.OpTimeout, Run: "r"}, false, false},
		{core.Command{Op: core.OpCancel, Run: "r"}, false, false},
		{core.Command{Op: core.OpCancel, Run: "q"}, true, true},
	}
	for i, s := range steps {
		rep := g.Step(s.cmd)
		require.NoError(t, rep.Err, "step %d", i)
		require.Equal(t, s.persist, rep.Persist, "step %d %+v: persist", i, s.cmd)
		require.Equal(t, s.wake, rep.Wake, "step %d %+v: wake", i, s.cmd)
	}
}

// randomCommands generates a command mix over few runs and keys, so that every action
// and answer is frequent.
func randomCommands(rng *rand.Rand, n int) []core.Command {
	runs := []core.RunID{"r1", "r2", "r3"}
	keys := []core.Key{"a", "b", "c", "d"}
	out := make([]core.Command, n)
	for i := range out {
		c := core.Command{Run: runs[rng.IntN(len(runs))], Key: keys[rng.IntN(len(keys))],
			Epoch: uint64(1 + rng.IntN(3)), Gated: rng.IntN(3) == 0, Now: core.Time(i)}
		switch rng.IntN(12) {
		case 0:
			c.Op, c.Deadline = core.OpOpen, core.Time(rng.IntN(3)*n/2)
		case 1, 2, 3, 4:
			c.Op = core.OpAdmit
		case 5, 6:
			c.Op, c.Decision = core.OpDecide, core.Decision(1+rng.IntN(2))
		case 7:
			c.Op, c.Outcome, c.Result = core.OpComplete, core.Outcome(1+rng.IntN(2)), fmt.Sprint(rng.IntN(2))
		case 8:
			c.Op = core.OpCancel
		case 9:
			c.Op = core.OpFence
		case 10:
			c.Op = core.OpTimeout
		default:
			c.Op = core.OpStatus
		}
		out[i] = c
	}
	return out
}

// TestReplayRebuildsState: replaying the persisted commands (what the log keeps) gives
// the same state and the same answers; a snapshot round-trips exactly.
func TestReplayRebuildsState(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 0))
		g := core.New(core.DefaultLimits())
		var log [][]byte
		for _, c := range randomCommands(rng, 300) {
			if rep := g.Step(c); rep.Persist {
				log = append(log, core.AppendCommand(nil, c))
			}
		}
		h := core.New(core.DefaultLimits())
		for _, rec := range log {
			c, err := core.DecodeCommand(rec)
			require.NoError(t, err)
			require.True(t, h.Step(c).Persist, "seed %d: a logged command did not change the replayed state", seed)
		}
		want, _ := g.MarshalBinary()
		got, _ := h.MarshalBinary()
		require.Equal(t, want, got, "seed %d: replay diverged", seed)

		s := core.New(core.DefaultLimits())
		require.NoError(t, s.UnmarshalBinary(want))
		again, _ := s.MarshalBinary()
		require.Equal(t, want, again, "seed %d: snapshot round trip", seed)
		ng, rg, okg := g.NextDeadline()
		ns, rs, oks := s.NextDeadline()
		require.Equal(t, okg, oks)
		require.Equal(t, ng, ns)
		require.Equal(t, rg, rs)
	}
}

func TestCodecRejectsGarbage(t *testing.T) {
	good := core.AppendCommand(nil, core.Command{Op: core.OpAdmit, Run: "r", Key: "k", Epoch: 1})
	for i := range good {
		_, err := core.DecodeCommand(good[:i])
		require.ErrorIs(t, err, core.ErrCodec, "prefix of %d bytes", i)
	}
	_, err := core.DecodeCommand(append(good, 0))
	require.ErrorIs(t, err, core.ErrCodec)
	g := core.New(core.DefaultLimits())
	require.ErrorIs(t, g.UnmarshalBinary([]byte{9, 9, 9}), core.ErrCodec)
}

func TestErrorsAreTyped(t *testing.T) {
	for _, e := range core.Errors {
		require.True(t, strings.HasPrefix(e.Error(), "soundgate/core: "))
		require.True(t, errors.Is(fmt.Errorf("wrapped: %w", e), e))
		require.NotEmpty(t, e.Code)
	}
	require.False(t, errors.Is(core.ErrNotPending, core.ErrNotAdmitted))
}

func TestMain(m *testing.M) { os.Exit(m.Run()) }

// BenchmarkAdmit measures the admit path of the core: a new key on an active run.
func BenchmarkAdmit(b *testing.B) {
	g := core.New(core.Limits{RunsMax: 1 << 30, KeysPerRunMax: 1 << 30, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64})
	const runs = 1024
	for i := 0; i < runs; i++ {
		g.Open(core.RunID("run-"+strconv.Itoa(i)), 0)
	}
	keys := make([]core.Key, b.N)
	ids := make([]core.RunID, b.N)
	for i := range keys {
		keys[i] = core.Key("key-" + strconv.Itoa(i))
		ids[i] = core.RunID("run-" + strconv.Itoa(i%runs))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if res, _ := g.Admit(ids[i], keys[i], 1, false, 0); res.Answer != core.AnswerAdmit {
			b.Fatal(res.Answer)
		}
	}
}

// BenchmarkAdmitDuplicate measures the replay path: an already admitted key.
func BenchmarkAdmitDuplicate(b *testing.B) {
	g := core.New(core.DefaultLimits())
	g.Open("r", 0)
	g.Admit("r", "k", 1, false, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, _ := g.Admit("r", "k", 1, false, 0); res.Answer != core.AnswerDuplicate {
			b.Fatal(res.Answer)
		}
	}
}

// BenchmarkResidentMillion reports the heap the core holds for one million admitted
// effects (1,000 runs of 1,000 keys, keys of 16 bytes): the gate's memory per effect.
func BenchmarkResidentMillion(b *testing.B) {
	const runs, keysPerRun = 1000, 1000
	keys := make([]core.Key, keysPerRun)
	for i := range keys {
		keys[i] = core.Key(fmt.Sprintf("tool-call-%06d", i))
	}
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		g := core.New(core.Limits{RunsMax: runs, KeysPerRunMax: keysPerRun, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64})
		for r := 0; r < runs; r++ {
			id := core.RunID(fmt.Sprintf("run-%04d", r))
			g.Open(id, 0)
			for _, k := range keys {
				if res, _ := g.Admit(id, k, 1, false, 0); res.Answer != core.AnswerAdmit {
					b.Fatal(res.Answer)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(1<<20), "MiB/1M-effects")
		b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/(runs*keysPerRun), "B/effect")
		runtime.KeepAlive(g)
	}
}

// BenchmarkMarshalSnapshot measures a snapshot of half a million effects (16 runs of
// 32,768 keys), the state a 5 s pipelined bench leaves: serve encodes it under the
// server's lock, so its time is a stall of the whole gate.
func BenchmarkMarshalSnapshot(b *testing.B) {
	const runs, keysPerRun = 16, 1 << 15
	g := core.New(core.Limits{RunsMax: runs, KeysPerRunMax: keysPerRun, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64})
	for r := 0; r < runs; r++ {
		id := core.RunID(fmt.Sprintf("run-%02d", r))
		g.Open(id, 0)
		for k := 0; k < keysPerRun; k++ {
			g.Admit(id, core.Key("c"+strconv.Itoa(r)+"-"+strconv.Itoa(k)), 1, false, 0)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.MarshalBinary(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/(runs*keysPerRun), "ns/effect")
}

// TestSnapshotOfLargeRuns: a snapshot of runs with thousands of effects round-trips
// and lists each run's keys in order. The random histories above keep few keys per
// run, and MarshalBinary sizes its buffer from the effect count: a wrong estimate
// there (a negative capacity panics) showed only on large runs.
func TestSnapshotOfLargeRuns(t *testing.T) {
	g := core.New(core.Limits{RunsMax: 8, KeysPerRunMax: 1 << 14, PendingPerRunMax: 1 << 14, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64})
	for r := 0; r < 3; r++ {
		id := core.RunID("run-" + strconv.Itoa(r))
		g.Open(id, 0)
		for k := 0; k < 3000; k++ {
			res, _ := g.Admit(id, core.Key("key-"+strconv.Itoa(k)), 1, k%7 == 0, 0)
			require.NotEqual(t, core.AnswerDenied, res.Answer)
		}
	}
	snap, err := g.MarshalBinary()
	require.NoError(t, err)
	h := core.New(core.DefaultLimits())
	require.NoError(t, h.UnmarshalBinary(snap))
	again, err := h.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, snap, again, "a large snapshot does not round-trip")
	require.Greater(t, len(h.Effects("run-1")), 2000)
	require.Equal(t, g.Effects("run-1"), h.Effects("run-1"))
	entries := g.Len()
	for _, id := range g.RunIDs() {
		entries += len(g.Effects(id))
	}
	require.Equal(t, entries, g.Entries(), "Entries counts runs and effects")
	require.Equal(t, entries, h.Entries())
	require.Equal(t, 0, core.New(core.DefaultLimits()).Entries())
}
