package sandbox_test

import (
	"bytes"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/internal/kerneltest"
)

// TestSignalReachesAgent: SIGTERM sent to the sandbox is passed on to the agent by
// the reaper, and the agent's own exit status comes back.
func TestSignalReachesAgent(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	var out syncBuffer
	sb, err := sandbox.Start(sandbox.Config{
		Argv:   []string{"sh", "-c", `trap 'echo got TERM; exit 9' TERM; echo ready; while :; do sleep 0.05; done`},
		Env:    []string{"PATH=/usr/bin:/bin"},
		Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Kill()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), "ready"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the agent never started")
		}
	}
	if err := sb.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := sb.Wait()
	if err != nil || code != 9 || !strings.Contains(out.String(), "got TERM") {
		t.Fatalf("exit %d %v, output %q; want 9 after the agent's trap", code, err, out.String())
	}
}

// syncBuffer is a bytes.Buffer that the agent's output copier and the test may use
// at the same time.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
