package sandbox_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/internal/kerneltest"
)

// gateHelperEnv makes the test binary act as a gate that starts a sandbox whose agent
// leaves a tree of sleeping processes, prints the reaper's host PID, and waits.
const gateHelperEnv = "SOUNDGATE_SANDBOX_TEST_GATE"

// agentTree is an agent with grandchildren that would outlive it if nothing reaped them.
var agentTree = []string{"sh", "-c", "sleep 60 & sleep 60 & (sleep 60 &) ; exec sleep 60"}

func gateHelper() {
	d := sandbox.Layers{Pdeathsig: os.Getenv(gateHelperEnv) == "pipe-only"}
	sb, err := sandbox.Start(sandbox.Config{Argv: agentTree, Env: []string{"PATH=/usr/bin:/bin"}, Disable: d})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(sb.InitPID())
	sb.Wait()
	os.Exit(0)
}

// nsMembers returns the host PIDs of processes in the PID namespace of pid ("" link: gone).
func nsMembers(t *testing.T, nsLink string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink(filepath.Join("/proc", e.Name(), "ns/pid")); err == nil && l == nsLink {
			pids = append(pids, pid)
		}
	}
	return pids
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestGateSIGKILLTakesTheTree: SIGKILL of the gate ends the reaper and every process
// of the agent's tree; nothing is left in the sandbox's PID namespace. It holds with
// the parent-death signal and with the reaper's pipe alone.
func TestGateSIGKILLTakesTheTree(t *testing.T) {
	for _, mode := range []string{"pdeathsig-and-pipe", "pipe-only"} {
		t.Run(mode, func(t *testing.T) { gateSIGKILL(t, mode) })
	}
}

func gateSIGKILL(t *testing.T, mode string) {
	kerneltest.Require(t, sandbox.Layers{})
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	gate := exec.Command(exe, "-test.run=^$")
	gate.Env = append(os.Environ(), gateHelperEnv+"="+mode)
	out, err := gate.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := gate.Start(); err != nil {
		t.Fatal(err)
	}
	defer gate.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("gate helper: %v", err)
	}
	initPID, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("gate helper said %q", line)
	}
	defer syscall.Kill(initPID, syscall.SIGKILL) // if the test fails, leave nothing behind
	nsLink, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", initPID))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent's tree (reaper, sh, 4 sleeps)", func() bool { return len(nsMembers(t, nsLink)) >= 5 })
	members := nsMembers(t, nsLink)
	if err := gate.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	gate.Wait()
	waitFor(t, "the PID namespace to empty", func() bool { return len(nsMembers(t, nsLink)) == 0 })
	for _, pid := range members {
		if err := syscall.Kill(pid, 0); err == nil {
			t.Errorf("process %d of the sandbox outlived the gate", pid)
		}
	}
}

// TestAgentExitReapsOrphans: when the agent exits, what it left running goes too.
func TestAgentExitReapsOrphans(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	sb, err := sandbox.Start(sandbox.Config{Argv: []string{"sh", "-c", "(sleep 60 &); sleep 60 & exit 7"},
		Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Kill()
	nsLink, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", sb.InitPID()))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	code, err := sb.Wait()
	if err != nil || code != 7 {
		t.Fatalf("exit %d %v, want 7", code, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Wait took %v: the orphans held the sandbox", d)
	}
	waitFor(t, "the PID namespace to empty", func() bool { return len(nsMembers(t, nsLink)) == 0 })
}

// TestSignalReachesAgent: SIGTERM sent to the sandbox is passed on to the agent by
// the reaper, and the agent's own exit status comes back.
func TestSignalReachesAgent(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sb, err := sandbox.Start(sandbox.Config{
		Argv:   []string{"sh", "-c", `trap 'echo got TERM; exit 9' TERM; echo ready; while :; do sleep 0.05; done`},
		Env:    []string{"PATH=/usr/bin:/bin"},
		Stdout: w,
	})
	w.Close() // the sandbox has its own copy: the pipe ends with the agent
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Kill()
	r.SetReadDeadline(time.Now().Add(10 * time.Second))
	out := bufio.NewReader(r)
	if line, err := out.ReadString('\n'); line != "ready\n" {
		t.Fatalf("the agent never started: %q %v", line, err)
	}
	if err := sb.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	code, err := sb.Wait()
	rest, _ := io.ReadAll(out)
	if err != nil || code != 9 || !strings.Contains(string(rest), "got TERM") {
		t.Fatalf("exit %d %v, output %q; want 9 after the agent's trap", code, err, rest)
	}
}

// BenchmarkStart measures the start-up cost of a sandbox: from Start to the exit of
// an agent that does nothing (/bin/true), with every layer on.
func BenchmarkStart(b *testing.B) {
	kerneltest.Require(b, sandbox.Layers{})
	for b.Loop() {
		sb, err := sandbox.Start(sandbox.Config{Argv: []string{"true"}, Env: []string{"PATH=/usr/bin:/bin"}})
		if err != nil {
			b.Fatal(err)
		}
		if code, err := sb.Wait(); code != 0 || err != nil {
			b.Fatalf("exit %d %v", code, err)
		}
	}
}
