package crashcheck

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestCrashHarness is the short run of the harness for `make test`: the real gate,
// SIGKILLed at random moments and at failpoints, must lose nothing it answered; and the
// negative control (serve-unsafe, which answers before writing its log) must be
// caught losing decisions.
func TestCrashHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real gate; skipped with -short")
	}
	bin, err := servertest.Build(context.Background(), t.TempDir(), "failpoints", "brokengate")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("serve", func(t *testing.T) {
		cfg := Config{Binary: bin, Dir: shortDir(t), Cycles: 12, Seed: 1, Clients: 8,
			KillAfterMax: 150 * time.Millisecond, FailpointEach: 3, SnapshotEvery: 500, ChecksMax: 200, Logf: t.Logf}
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res.Summary(cfg))
		for _, v := range res.Violations {
			t.Error(v)
		}
		if res.Cycles != cfg.Cycles || res.Acked == 0 || res.Checked == 0 || res.AdmitAnswers == 0 {
			t.Fatalf("the harness did not exercise the gate: %+v", res)
		}
		if res.FailpointKills == 0 {
			t.Fatal("no failpoint fired: is the binary built with -tags failpoints?")
		}
	})
	t.Run("serve-unsafe is caught", func(t *testing.T) {
		cfg := Config{Binary: bin, Subcommand: "serve-unsafe", Dir: shortDir(t), Cycles: 8, Seed: 2, Clients: 8,
			KillAfterMax: 150 * time.Millisecond, ChecksMax: 200, Logf: t.Logf}
		res, err := Run(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res.Summary(cfg))
		if len(res.Violations) == 0 {
			t.Fatal("the harness did not notice a gate that answers before its log is written")
		}
		if !strings.HasPrefix(res.Violations[0], "D1:") && !strings.HasPrefix(res.Violations[0], "P") {
			t.Fatalf("unexpected violation kind: %s", res.Violations[0])
		}
		t.Logf("first of %d violations: %s", len(res.Violations), res.Violations[0])
	})
}

// shortDir is a temporary directory with a short path: a Unix socket path is limited
// to about 100 bytes.
func shortDir(t *testing.T) string {
	d, err := os.MkdirTemp("", "sgc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}
