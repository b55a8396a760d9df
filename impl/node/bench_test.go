package node_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

// BenchmarkSnapshotStall measures whether a snapshot stops admits. A durable node
// recovered with a state of 1 and of 10 million effects admits new keys, one at a
// time, each made durable before the next (a lone client: its latency is one append
// and one fdatasync). With snapshots on, the first snapshot starts after 1,000
// admits and encodes the whole state while the admits go on; the run lasts until it
// is written and 2,000 admits more. As many admits with snapshots off give the
// reference (as many, since a longer run sees rarer delays). It reports the p999
// and the max of both, the max with snapshots over the p999 and over the max
// without, and the max without over its own p999 (the disk's own tail: the floor of
// the first ratio).
//
//	go test -run '^$' -bench BenchmarkSnapshotStall -benchtime 1x ./impl/node
//
// SOUNDGATE_BENCH_DIR puts the logs on another disk (default: a temporary directory).
func BenchmarkSnapshotStall(b *testing.B) {
	for _, effects := range []int{1_000_000, 10_000_000} {
		b.Run(fmt.Sprintf("effects=%dM", effects/1_000_000), func(b *testing.B) {
			dir := benchDir(b)
			writeState(b, dir, effects)
			b.ResetTimer()
			for range b.N {
				on := admitLatencies(b, dir, 1000, 0)
				off := admitLatencies(b, dir, 0, len(on))
				p999, maxOff, maxOn := percentile(off, 0.999), slices.Max(off), slices.Max(on)
				b.ReportMetric(float64(p999.Microseconds()), "p999-µs-off")
				b.ReportMetric(float64(maxOff.Microseconds()), "max-µs-off")
				b.ReportMetric(float64(percentile(on, 0.999).Microseconds()), "p999-µs-snapshotting")
				b.ReportMetric(float64(maxOn.Microseconds()), "max-µs-snapshotting")
				b.ReportMetric(float64(maxOn)/float64(p999), "max-on/p999-off")
				b.ReportMetric(float64(maxOn)/float64(maxOff), "max-on/max-off")
				b.ReportMetric(float64(maxOff)/float64(p999), "max-off/p999-off")
				b.ReportMetric(float64(len(on)), "admits")
			}
		})
	}
}

func benchDir(b *testing.B) string {
	b.Helper()
	base := os.Getenv("SOUNDGATE_BENCH_DIR")
	if base == "" {
		return b.TempDir()
	}
	dir, err := os.MkdirTemp(base, "node-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// benchKeysPerRun spreads the effects over runs of this many keys.
const benchKeysPerRun = 1000

// writeState writes a log in dir/data whose snapshot holds effects admitted effects.
func writeState(b *testing.B, dir string, effects int) {
	b.Helper()
	l, err := wal.Open(filepath.Join(dir, "data"), wal.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	n, err := node.Recover(l, node.Config{})
	if err != nil {
		b.Fatal(err)
	}
	seed := n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "seed"}})
	if seed.Err != nil || n.Durable(seed.After) != nil {
		b.Fatal(seed.Err)
	}
	n.Close()
	// The state itself is built in memory and written as the snapshot after record 1.
	m := node.New(node.Config{})
	m.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: "seed"}})
	for i := 0; i < effects; i++ {
		run := core.RunID(fmt.Sprintf("run-%06d", i/benchKeysPerRun))
		if i%benchKeysPerRun == 0 {
			m.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: run}})
		}
		a := m.Apply(node.Request{Cmd: core.Command{Op: core.OpAdmit, Run: run, Key: core.Key(fmt.Sprintf("tool-call-%06d", i%benchKeysPerRun)), Epoch: 1}})
		if a.Err != nil {
			b.Fatal(a.Err)
		}
	}
	var state []byte
	m.Inspect(func(g *core.Gate) { state, err = g.MarshalBinary() })
	m.Close()
	if err == nil {
		err = l.Snapshot(1, state)
	}
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
}

// admitLatencies recovers a copy of the log in dir and admits new keys, each made
// durable before the next, and returns their latencies. With every > 0 snapshots are
// on and the admits go on until a snapshot has been written and 2,000 more;
// otherwise there are count admits.
func admitLatencies(b *testing.B, dir string, every uint64, count int) []time.Duration {
	b.Helper()
	work := filepath.Join(dir, fmt.Sprint("work-", every))
	copyDir(b, filepath.Join(dir, "data"), work)
	defer os.RemoveAll(work)
	l, err := wal.Open(work, wal.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	n, err := node.Recover(l, node.Config{SnapshotEvery: every, SnapshotCheck: 10 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	runtime.GC()
	first := l.Stats().SnapshotLSN
	var lat []time.Duration
	after := -1 // admits left once the snapshot is written
	for i := 0; after != 0; i++ {
		run := core.RunID(fmt.Sprint("bench-", i/benchKeysPerRun))
		if i%benchKeysPerRun == 0 {
			if a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: run}}); a.Err != nil {
				b.Fatal(a.Err)
			}
		}
		start := time.Now()
		a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpAdmit, Run: run, Key: core.Key(fmt.Sprint("k", i)), Epoch: 1}})
		if a.Err == nil {
			a.Err = n.Durable(a.After)
		}
		if a.Err != nil {
			b.Fatal(a.Err)
		}
		lat = append(lat, time.Since(start))
		switch {
		case after > 0:
			after--
		case every == 0:
			after = count - 1 - i
		case after < 0 && l.Stats().SnapshotLSN != first:
			after = 2000
		}
		if i > 60_000_000 {
			b.Fatal("no snapshot was written")
		}
	}
	return lat
}

func copyDir(b *testing.B, from, to string) {
	b.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		b.Fatal(err)
	}
	names, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range names {
		if e.Name() == "LOCK" {
			continue
		}
		if err := copyFile(filepath.Join(from, e.Name()), filepath.Join(to, e.Name())); err != nil {
			b.Fatal(err)
		}
	}
}

// copyFile copies a file and syncs the copy, so that its writeback does not fall in
// the measurement.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	f, err := os.Create(to)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Sync(), f.Close())
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkApplyCPU measures the CPU the node spends per admitted effect, the
// snapshots' cuts included, with snapshots off and on: an in-memory log that
// acknowledges at once (no disk), so the figure is the node's own work. It reports
// the process's CPU time per admit (user and system, all goroutines).
//
//	go test -run '^$' -bench BenchmarkApplyCPU -benchtime 1000000x ./impl/node
func BenchmarkApplyCPU(b *testing.B) {
	for _, every := range []uint64{0, 100_000} {
		b.Run(fmt.Sprintf("snapshot-every=%d", every), func(b *testing.B) {
			n := node.New(node.Config{Log: &countingLog{}, SnapshotEvery: every, SnapshotCheck: 10 * time.Millisecond})
			defer n.Close()
			const runs = 64
			for r := 0; r < runs; r++ {
				n.Apply(node.Request{Cmd: core.Command{Op: core.OpOpen, Run: core.RunID(fmt.Sprint("run-", r))}})
			}
			keys := make([]core.Key, b.N)
			for i := range keys {
				keys[i] = core.Key(fmt.Sprint("key-", i))
			}
			runtime.GC()
			before := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				a := n.Apply(node.Request{Cmd: core.Command{Op: core.OpAdmit, Run: core.RunID(fmt.Sprint("run-", i%runs)), Key: keys[i], Epoch: 1}})
				if a.Err != nil {
					b.Fatal(a.Err)
				}
			}
			n.Close() // a snapshot in progress gives up
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-before).Nanoseconds())/float64(b.N), "cpu-ns/admit")
		})
	}
}

// countingLog acknowledges every record at once and keeps none.
type countingLog struct{ last wal.LSN }

func (l *countingLog) Append([]byte) (wal.LSN, error) { l.last++; return l.last, nil }

func (l *countingLog) WaitDurable(context.Context, wal.LSN) error { return nil }

// BeginSnapshot implements node.Compactor: the state is cut and encoded; nothing is
// kept.
func (l *countingLog) BeginSnapshot(wal.LSN) (wal.SnapshotWriter, error) { return discard{}, nil }

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
func (discard) Commit() error               { return nil }
func (discard) Abort()                      {}
