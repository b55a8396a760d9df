package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCPUProfileEnv: SOUNDGATE_CPUPROFILE makes any command write a pprof CPU
// profile (gzip), and a path that cannot be written fails the command before it runs.
func TestCPUProfileEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	t.Setenv(cpuProfileEnv, path)
	if code := dispatch([]string{"version"}); code != exitOK {
		t.Fatalf("version with a profile: exit %d", code)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("the profile is not gzip (pprof's format): % x", b[:min(len(b), 8)])
	}
	t.Setenv(cpuProfileEnv, filepath.Join(t.TempDir(), "missing", "cpu.pprof"))
	if code := dispatch([]string{"version"}); code != exitFailure {
		t.Fatalf("unwritable profile path: exit %d, want %d", code, exitFailure)
	}
}
