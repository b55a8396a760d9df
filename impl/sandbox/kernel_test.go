package sandbox_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/sandbox"
)

// TestCheckRefusesOldKernels: Start refuses below the Landlock ABI it needs, without
// seccomp or without user namespaces, and says what is missing.
func TestCheckRefusesOldKernels(t *testing.T) {
	full := sandbox.Kernel{LandlockABI: sandbox.LandlockABIMin, Seccomp: true, UserNS: true}
	cases := []struct {
		name string
		k    sandbox.Kernel
		d    sandbox.Layers
		want string // "" : accepted
	}{
		{"minimum", full, sandbox.Layers{}, ""},
		{"newer Landlock", sandbox.Kernel{LandlockABI: 9, Seccomp: true, UserNS: true}, sandbox.Layers{}, ""},
		{"Landlock ABI 5", sandbox.Kernel{LandlockABI: 5, Seccomp: true, UserNS: true}, sandbox.Layers{}, "Landlock ABI 6 (have 5)"},
		{"no Landlock", sandbox.Kernel{Seccomp: true, UserNS: true}, sandbox.Layers{}, "Landlock ABI 6 (have 0)"},
		{"no Landlock, layer off", sandbox.Kernel{Seccomp: true, UserNS: true}, sandbox.Layers{Landlock: true}, ""},
		{"no seccomp", sandbox.Kernel{LandlockABI: 7, UserNS: true}, sandbox.Layers{}, "seccomp"},
		{"no user namespaces", sandbox.Kernel{LandlockABI: 7, Seccomp: true}, sandbox.Layers{}, "user namespaces"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.k.Check(tc.d)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, sandbox.ErrKernel) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want ErrKernel naming %q", err, tc.want)
			}
		})
	}
}
