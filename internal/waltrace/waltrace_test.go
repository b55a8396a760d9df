package waltrace

import (
	"slices"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/crashsim"
)

const specPath = "../../spec/tla/WAL.tla"

// The crash loop's configurations (impl/wal/crashsim TestCrashLoop).
var loops = []struct {
	name string
	cfg  crashsim.Config
}{
	{"one writer", crashsim.Config{Seed: 1, Cycles: 100, Writers: 1, RecordsMax: 60, OpsMax: 80, SegmentBytes: 1024, PayloadMax: 100}},
	{"concurrent writers", crashsim.Config{Seed: 2, Cycles: 100, Writers: 8, RecordsMax: 150, OpsMax: 120, SegmentBytes: 2048, PayloadMax: 200}},
	{"with snapshots", crashsim.Config{Seed: 3, Cycles: 100, Writers: 4, RecordsMax: 150, OpsMax: 150, SegmentBytes: 1024, SnapshotEvery: 40, PayloadMax: 120}},
}

// TestCrashSimFollowsTheSpec replays every life of the crash loop through WAL.tla:
// each step is one the spec allows, each recovery one it can reach, and its
// invariants hold after each.
func TestCrashSimFollowsTheSpec(t *testing.T) {
	for _, tc := range loops {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(specPath)
			if err != nil {
				t.Fatal(err)
			}
			cfg := tc.cfg
			cfg.Trace = c.Check
			t.Logf("seed %d", cfg.Seed)
			res, err := crashsim.Run(cfg)
			if err != nil {
				t.Fatal(err)
			}
			st := c.Stats()
			if st.Traces != cfg.Cycles+1 || st.Crashes != cfg.Cycles || st.Recoveries != cfg.Cycles+1 || st.Steps < 10*cfg.Cycles {
				t.Fatalf("traces not replayed in full: %+v", st)
			}
			if cfg.SnapshotEvery > 0 && st.Snapshots < res.Snapshots {
				t.Fatalf("%d snapshots replayed, %d taken", st.Snapshots, res.Snapshots)
			}
			t.Log(res.Summary(cfg))
			t.Log(st.Summary("spec/tla/WAL.tla"))
		})
	}
}

// lives records the traces of a short run with snapshots.
func lives(t *testing.T) [][]crashsim.Event {
	t.Helper()
	var out [][]crashsim.Event
	cfg := loops[2].cfg
	cfg.Cycles = 30
	cfg.Trace = func(events []crashsim.Event) error {
		out = append(out, slices.Clone(events))
		return nil
	}
	if _, err := crashsim.Run(cfg); err != nil {
		t.Fatal(err)
	}
	return out
}

// replay checks the traces with a new checker.
func replay(t *testing.T, ls [][]crashsim.Event) error {
	t.Helper()
	c, err := New(specPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if err := c.Check(l); err != nil {
			return err
		}
	}
	return nil
}

// TestBrokenTracesAreCaught: traces a broken log would leave are refused, each at
// the step that breaks the spec; the unchanged traces pass.
func TestBrokenTracesAreCaught(t *testing.T) {
	base := lives(t)
	if err := replay(t, base); err != nil {
		t.Fatalf("the unchanged traces: %v", err)
	}
	copyOf := func() [][]crashsim.Event {
		out := make([][]crashsim.Event, len(base))
		for i, l := range base {
			out[i] = slices.Clone(l)
		}
		return out
	}
	// firstAckedLife is the first life with an Ack and the LSN of its last Ack.
	firstAckedLife := func(ls [][]crashsim.Event) (int, wal.LSN) {
		for i, l := range ls {
			var acked wal.LSN
			for _, e := range l {
				if e.Action == crashsim.Ack {
					acked = max(acked, e.LSN)
				}
			}
			if acked > 0 && i+1 < len(ls) {
				return i, acked
			}
		}
		t.Fatal("no life acknowledged a record")
		return 0, 0
	}
	cases := []struct {
		name, want string
		mutate     func(ls [][]crashsim.Event)
	}{
		{"acknowledged before the fdatasync", "Ack(", func(ls [][]crashsim.Event) {
			i, _ := firstAckedLife(ls)
			ls[i] = slices.DeleteFunc(ls[i], func(e crashsim.Event) bool { return e.Action == crashsim.Sync })
		}},
		{"an acknowledged record missing after the crash", "Recover(", func(ls [][]crashsim.Event) {
			// an acknowledged record the next recovery replays as a record, not inside
			// its snapshot (which of them a snapshot covers depends on timing)
			for i := 0; i+1 < len(ls); i++ {
				acked := map[wal.LSN]bool{}
				for _, e := range ls[i] {
					if e.Action == crashsim.Ack {
						acked[e.LSN] = true
					}
				}
				r := *ls[i+1][0].Replay
				if k := slices.IndexFunc(r.Records, func(x crashsim.Record) bool { return acked[x.LSN] }); k >= 0 {
					r.Records = slices.Delete(slices.Clone(r.Records), k, k+1)
					ls[i+1][0].Replay = &r
					return
				}
			}
			t.Fatal("no recovery replayed a record acknowledged in the life before")
		}},
		{"a replayed record that is not the one appended", "Recover(", func(ls [][]crashsim.Event) {
			for i := 1; i < len(ls); i++ {
				if r := *ls[i][0].Replay; len(r.Records) > 0 {
					r.Records = slices.Clone(r.Records)
					r.Records[0].Payload++
					ls[i][0].Replay = &r
					return
				}
			}
			t.Fatal("no recovery replayed a record")
		}},
		{"an LSN skipped", "the spec appends at LSN", func(ls [][]crashsim.Event) {
			for i, e := range ls[0] {
				if e.Action == crashsim.Append {
					ls[0][i].LSN++
					return
				}
			}
		}},
		{"a snapshot of records not durable", "Snapshot(", func(ls [][]crashsim.Event) {
			for _, l := range ls {
				for i, e := range l {
					if e.Action == crashsim.Snapshot {
						l[i].LSN += 1000
						return
					}
				}
			}
			t.Fatal("no snapshot")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := copyOf()
			tc.mutate(ls)
			err := replay(t, ls)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want a mismatch at %q, got %v", tc.want, err)
			}
			t.Logf("caught: %s", strings.SplitN(err.Error(), "\n", 2)[0])
		})
	}
}
