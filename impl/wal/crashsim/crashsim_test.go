package crashsim

import (
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
