package sandbox_test

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/internal/kerneltest"
)

func TestMain(m *testing.M) {
	sandbox.RunStageIfChild()
	if os.Getenv(gateHelperEnv) != "" {
		gateHelper()
	}
	os.Exit(m.Run())
}

func TestExitStatusAndOutput(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	cases := []struct {
		name   string
		argv   []string
		code   int
		stdout string
	}{
		{"true", []string{"true"}, 0, ""},
		{"exit 3", []string{"sh", "-c", "exit 3"}, 3, ""},
		{"killed by SIGTERM", []string{"sh", "-c", "kill -TERM $$"}, 128 + 15, ""},
		{"child of the reaper, uid 0, no capabilities", []string{"sh", "-c", "echo $PPID $(id -u); grep ^Cap /proc/self/status"}, 0,
			"1 0\nCapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\n"},
		{"NoNewPrivs and seccomp", []string{"sh", "-c", "grep -E '^(NoNewPrivs|Seccomp):' /proc/self/status"}, 0,
			"NoNewPrivs:\t1\nSeccomp:\t2\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			sb, err := sandbox.Start(sandbox.Config{Argv: tc.argv, Stdout: &out, Stderr: &errb, Env: []string{"PATH=/usr/bin:/bin"}})
			if err != nil {
				t.Fatal(err)
			}
			go func() {
				for {
					c, err := sb.Listener().Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
			code, err := sb.Wait()
			if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d (stderr %q)", code, tc.code, errb.String())
			}
			if tc.stdout != "" && out.String() != tc.stdout {
				t.Errorf("stdout %q, want %q", out.String(), tc.stdout)
			}
		})
	}
}

func TestStartRefusesBadConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  sandbox.Config
		want string
	}{
		{"no command", sandbox.Config{}, "no command"},
		{"relative writable", sandbox.Config{Argv: []string{"true"}, Writable: []string{"rel"}}, "not absolute"},
		{"writable root", sandbox.Config{Argv: []string{"true"}, Writable: []string{"/"}}, "is the root"},
		{"missing writable", sandbox.Config{Argv: []string{"true"}, Writable: []string{"/nonexistent/soundgate"}}, "no such file"},
		{"bad port", sandbox.Config{Argv: []string{"true"}, ProxyPort: 70000}, "out of range"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sandbox.Start(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if !errorsIs(err, sandbox.ErrConfig) {
				t.Fatalf("error %v is not ErrConfig", err)
			}
		})
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }
