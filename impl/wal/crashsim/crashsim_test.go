package crashsim

import (
	"encoding/binary"
	"strings"
	"testing"
)

// TestCrashLoop crashes the log at random operations in a loop (seeds printed) and
// checks after every crash that recovery returns a prefix of what was appended that
// holds every acknowledged record.
func TestCrashLoop(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"one writer", Config{Seed: 1, Cycles: 100, Writers: 1, RecordsMax: 60, OpsMax: 80, SegmentBytes: 1024, PayloadMax: 100}},
		{"concurrent writers", Config{Seed: 2, Cycles: 100, Writers: 8, RecordsMax: 150, OpsMax: 120, SegmentBytes: 2048, PayloadMax: 200}},
		{"with snapshots", Config{Seed: 3, Cycles: 100, Writers: 4, RecordsMax: 150, OpsMax: 150, SegmentBytes: 1024, SnapshotEvery: 40, PayloadMax: 120}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logf = t.Logf
			t.Logf("seed %d", tc.cfg.Seed)
			res, err := Run(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Cycles != tc.cfg.Cycles || res.RecordsChecked == 0 || res.AckedChecked == 0 || res.TornTails == 0 {
				t.Fatalf("the loop did not exercise recovery: %+v", res)
			}
			if tc.cfg.SnapshotEvery > 0 {
				if res.Snapshots == 0 || res.SnapshotLoads == 0 {
					t.Fatalf("no snapshot written or loaded: %+v", res)
				}
			}
			t.Log(res.Summary(tc.cfg))
		})
	}
}

// TestRecorderOrder: a batch written before its writer recorded the Append waits
// for it, and so does every step after it; a life ends with no step waiting.
func TestRecorderOrder(t *testing.T) {
	r := &recorder{}
	r.start(Event{Action: Recover, Replay: &Replay{}}, 0)
	r.add(Event{Action: Append, LSN: 1})
	r.add(Event{Action: Write, LSN: 2}) // record 2's writer has not recorded it yet
	r.add(Event{Action: Sync})
	r.add(Event{Action: Ack, LSN: 1})
	r.add(Event{Action: Append, LSN: 2})
	events, err := r.finish(true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range events {
		got = append(got, e.String())
	}
	want := "Recover(snapshot 0, no record) Append(1) Append(2) Write(2) Sync Ack(1) Crash"
	if s := strings.Join(got, " "); s != want {
		t.Fatalf("order %s, want %s", s, want)
	}
	r.start(Event{Action: Recover, Replay: &Replay{}}, 5)
	r.add(Event{Action: Write, LSN: 7})
	if _, err := r.finish(true); err == nil {
		t.Fatal("a step waiting for an Append never recorded was not reported")
	}
}

// TestLastLSN reads the last record of a write as the log lays records out.
func TestLastLSN(t *testing.T) {
	rec := func(lsn uint64, payload int) []byte {
		b := make([]byte, recordHeaderBytes+payload)
		binary.LittleEndian.PutUint32(b[4:], uint32(payload))
		binary.LittleEndian.PutUint64(b[8:], lsn)
		return b
	}
	b := append(rec(7, 3), rec(8, 0)...)
	if lsn, err := lastLSN(b); err != nil || lsn != 8 {
		t.Fatalf("lastLSN = %d, %v; want 8", lsn, err)
	}
	if _, err := lastLSN(b[:len(b)-1]); err == nil {
		t.Fatal("a cut record was read")
	}
}
