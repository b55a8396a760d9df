// Package kerneltest decides whether a test that needs the kernel's sandboxing
// features runs, skips or fails: with SOUNDGATE_REQUIRE_KERNEL=1 (set by CI) a
// missing feature fails the test; elsewhere the test skips and says why.
package kerneltest

import (
	"os"
	"testing"

	"github.com/soundgate/soundgate/impl/sandbox"
)

// RequireEnv is the variable that turns a missing kernel feature into a failure.
const RequireEnv = "SOUNDGATE_REQUIRE_KERNEL"

// Required reports whether the environment demands the kernel features.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Require skips or fails t unless the kernel can run a sandbox with the layers d
// switched off, as root (mapping the namespace's root to the host's).
func Require(t testing.TB, d sandbox.Layers) {
	t.Helper()
	err := sandbox.ProbeKernel().Check(d)
	if err == nil && os.Getuid() != 0 {
		err = errNotRoot
	}
	if err == nil {
		return
	}
	if Required() {
		t.Fatalf("%v (%s=1: a missing kernel feature is a failure)", err, RequireEnv)
	}
	t.Skipf("skipped: %v (set %s=1 to make this a failure)", err, RequireEnv)
}

type notRoot struct{}

func (notRoot) Error() string { return "these tests run as root (CI does)" }

var errNotRoot error = notRoot{}
