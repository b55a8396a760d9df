package core_test

import (
	"fmt"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
)

// BenchmarkAdmit measures the admit path of the core: a new key on an active run.
func BenchmarkAdmit(b *testing.B) {
	g := core.New(core.Limits{RunsMax: 1 << 30, KeysPerRunMax: 1 << 30, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64, StateBytesMax: 1 << 40})
	const runs = 1024
	for i := 0; i < runs; i++ {
		open(g, core.RunID("run-"+strconv.Itoa(i)), 0)
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
		if res, _ := admit(g, ids[i], keys[i], 1, false, 0); res.Answer != core.AnswerAdmit {
			b.Fatal(res.Answer)
		}
	}
}

// BenchmarkAdmitDuplicate measures the replay path: an already admitted key.
func BenchmarkAdmitDuplicate(b *testing.B) {
	g := core.New(core.DefaultLimits())
	open(g, "r", 0)
	admit(g, "r", "k", 1, false, 0)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if res, _ := admit(g, "r", "k", 1, false, 0); res.Answer != core.AnswerDuplicate {
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
		g := core.New(core.Limits{RunsMax: runs, KeysPerRunMax: keysPerRun, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64, StateBytesMax: 1 << 40})
		for r := 0; r < runs; r++ {
			id := core.RunID(fmt.Sprintf("run-%04d", r))
			open(g, id, 0)
			for _, k := range keys {
				if res, _ := admit(g, id, k, 1, false, 0); res.Answer != core.AnswerAdmit {
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
// 32,768 keys), the state a 5 s pipelined bench leaves, encoded in one call: what a
// gate that stops to snapshot would stall for (BenchmarkCut is what it does).
func BenchmarkMarshalSnapshot(b *testing.B) {
	const runs, keysPerRun = 16, 1 << 15
	g := core.New(core.Limits{RunsMax: runs, KeysPerRunMax: keysPerRun, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64, StateBytesMax: 1 << 40})
	for r := 0; r < runs; r++ {
		id := core.RunID(fmt.Sprintf("run-%02d", r))
		open(g, id, 0)
		for k := 0; k < keysPerRun; k++ {
			admit(g, id, core.Key("c"+strconv.Itoa(r)+"-"+strconv.Itoa(k)), 1, false, 0)
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

// BenchmarkCut measures a snapshot taken as the node takes it: a Cut copied in pieces
// of cutBudget entries (the node's budget), each of which would hold the node's lock,
// and encoded off it. Each iteration also encodes the same state with MarshalBinary,
// the reference. It reports both per effect, the time spent in Take (under the lock),
// the longest Take, and the ratio of that longest Take to the whole MarshalBinary: how
// much shorter the longest stall is than a snapshot taken under the lock. Two shapes:
// many small runs, and 16 runs of 32,768 keys (each copied a slice at a time).
//
//	go test -run '^$' -bench BenchmarkCut -benchtime 5x ./impl/core
func BenchmarkCut(b *testing.B) {
	const cutBudget = 4096
	for _, shape := range []struct{ runs, keysPerRun int }{{4096, 128}, {16, 1 << 15}} {
		b.Run(fmt.Sprintf("runs=%d,keys=%d", shape.runs, shape.keysPerRun), func(b *testing.B) {
			g := core.New(core.Limits{RunsMax: shape.runs, KeysPerRunMax: shape.keysPerRun, PendingPerRunMax: 1, RunBytesMax: 64, KeyBytesMax: 64, ResultBytesMax: 64, StateBytesMax: 1 << 40})
			for r := 0; r < shape.runs; r++ {
				id := core.RunID(fmt.Sprintf("run-%05d", r))
				open(g, id, 0)
				for k := 0; k < shape.keysPerRun; k++ {
					admit(g, id, core.Key("c"+strconv.Itoa(r)+"-"+strconv.Itoa(k)), 1, false, 0)
				}
			}
			effects := float64(shape.runs * shape.keysPerRun)
			var marshal, total, locked, longest time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				want, err := g.MarshalBinary()
				if err != nil {
					b.Fatal(err)
				}
				marshal += time.Since(start)

				start = time.Now()
				cut := g.BeginCut()
				buf := cut.AppendHeader(make([]byte, 0, len(want)))
				for {
					t := time.Now()
					more := cut.Take(cutBudget)
					took := time.Since(t)
					locked += took
					longest = max(longest, took)
					if !more {
						break
					}
					for part := true; part; {
						buf, part = cut.AppendTaken(buf, cutBudget)
					}
				}
				cut.End()
				total += time.Since(start)
				if len(buf) != len(want) {
					b.Fatalf("the cut encodes %d bytes, MarshalBinary %d", len(buf), len(want))
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(marshal.Nanoseconds())/n/effects, "marshal-ns/effect")
			b.ReportMetric(float64(total.Nanoseconds())/n/effects, "cut-ns/effect")
			b.ReportMetric(float64(locked.Nanoseconds())/n/effects, "locked-ns/effect")
			b.ReportMetric(float64(longest.Microseconds()), "longest-take-µs")
			b.ReportMetric(float64(longest)/(float64(marshal)/n), "longest-take/marshal")
		})
	}
}
