package lincheck

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/server/servertest"
)

// Binaries built once per test process, by build tags ("" is the normal build).
var (
	binMu   sync.Mutex
	bins    = map[string]string{}
	binsDir string
)

func binary(t *testing.T, tags string) string {
	t.Helper()
	binMu.Lock()
	defer binMu.Unlock()
	if b, ok := bins[tags]; ok {
		return b
	}
	if binsDir == "" {
		d, err := os.MkdirTemp("", "lincheck-bin-")
		if err != nil {
			t.Fatal(err)
		}
		binsDir = d
	}
	var tagList []string
	if tags != "" {
		tagList = strings.Split(tags, ",")
	}
	b, err := servertest.Build(context.Background(), binsDir, tagList...)
	if err != nil {
		t.Fatalf("cannot build the server (the linearizability check cannot run): %v", err)
	}
	bins[tags] = b
	return b
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binsDir != "" {
		os.RemoveAll(binsDir)
	}
	os.Exit(code)
}

// testShape is a small history: enough concurrency for interleavings, small enough
// that the campaigns below stay within a few seconds each. Six keys per run make the
// broken_p1 situation (an approved, released key asked again while another key's
// approval is open) frequent: about one history in ten.
func testShape() Shape {
	s := DefaultShape()
	s.Clients, s.OpsPerClient, s.Runs, s.Keys = 5, 24, 2, 6
	return s
}

func campaign(t *testing.T, cfg Config) Result {
	t.Helper()
	cfg.Dir = t.TempDir()
	if cfg.Shape == (Shape{}) {
		cfg.Shape = testShape()
	}
	cfg.CheckTimeout = time.Minute
	cfg.Parallel = 2
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.Summary(t.Name(), 0))
	for _, p := range res.Reports {
		t.Log("failure report:", p)
	}
	return res
}

// TestServerLinearizable: the real server, without crashes, with some requests timed
// out on the client (unknown outcomes), is linearizable.
func TestServerLinearizable(t *testing.T) {
	shape := testShape()
	shape.ShortTimeouts = 0.1
	res := campaign(t, Config{Bin: binary(t, ""), Histories: 8, Seed: 1, Shape: shape})
	if res.Failures != 0 || res.Inconclusive != 0 || res.ServerStopErr != nil {
		t.Fatalf("the server is not linearizable: %s", res.Summary("serve", 0))
	}
	if res.Histories != 8 || res.Requests != 8*shape.Clients*shape.OpsPerClient || res.Ops < res.Requests-res.Unknown || res.Unknown == 0 {
		t.Fatalf("the campaign did not run as asked: %+v", res)
	}
}

// The positive check across crashes (SIGKILL and restart while histories run) is
// the verify campaign (ci/mk/lin.mk), not a unit test: a durability defect shows only
// when a crash falls between an answer and the fsync of what it read, which takes
// hundreds of histories (docs/verify/linearizability.md).
// TestNegativeControls/brokengate exercises the same crash-restart machinery.

// TestNegativeControls: servers broken on purpose must be found not linearizable.
func TestNegativeControls(t *testing.T) {
	tests := []struct {
		name       string
		tags       string
		command    []string
		crashEvery time.Duration
	}{
		// broken_p3: a completed effect is admitted again.
		{"broken_p3", "broken_p3", nil, 0},
		// broken_p1: a released effect is admitted while another approval is pending.
		{"broken_p1", "broken_p1", nil, 0},
		// brokengate: the log acknowledges before the record is written; a crash
		// loses acknowledged answers.
		{"brokengate", "brokengate", []string{"serve-unsafe"}, 150 * time.Millisecond},
	}
	const historiesMax = 150 // a control missed this long is a failure
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := campaign(t, Config{Bin: binary(t, tc.tags), Command: tc.command, Histories: historiesMax, Seed: 3,
				CrashEvery: tc.crashEvery, StopAfter: 1})
			if res.Failures == 0 {
				t.Fatalf("negative control %s NOT caught in %d histories: %s", tc.name, res.Histories, res.Summary(tc.name, 0))
			}
			if _, err := os.Stat(res.Reports[0]); err != nil {
				t.Errorf("no visualization written: %v", err)
			}
			// How far a history shrinks depends on where the crashes fell (an unknown
			// outcome cannot be dropped soundly; on a loaded machine most outcomes are
			// unknown), so this only asks that it shrank: TestShrink checks how far.
			t.Logf("the first failing history: %d operations, shrunk to %d", res.FailedOps[0], res.ShrunkOps[0])
			if res.ShrunkOps[0] == 0 || res.ShrunkOps[0] >= res.FailedOps[0] {
				t.Errorf("a failing history of %d operations shrunk only to %d", res.FailedOps[0], res.ShrunkOps[0])
			}
		})
	}
}
