package escape_test

import (
	"os"
	"testing"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/escape"
	"github.com/soundgate/soundgate/impl/sandbox/internal/kerneltest"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

func TestMain(m *testing.M) {
	sandbox.RunStageIfChild()
	escape.RunProbeIfChild()
	os.Exit(m.Run())
}

// gate starts an in-memory gate server and dials it as operator, approver and agent.
func gate(t *testing.T) (ops, approver, agent *client.Client) {
	t.Helper()
	g := servertest.Start(t, servertest.Options{})
	return g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.AgentToken)
}

// startProxied starts the sandbox of cfg with proxy serving its listener and returns
// the channel that gets the agent's exit status; the sandbox is killed when the test
// ends.
func startProxied(t *testing.T, cfg sandbox.Config, proxy *egress.Proxy) chan int {
	t.Helper()
	sb, err := sandbox.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Kill() })
	go proxy.Serve(sb.Listener())
	done := make(chan int, 1)
	go func() { code, _ := sb.Wait(); done <- code }()
	return done
}

func exe(t *testing.T) string {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func logReport(t *testing.T, rep *escape.Report) {
	for _, r := range rep.Results {
		t.Logf("%-18s ok=%-5v leaked=%-5v errno=%d step=%s sink=%d status=%d %s", r.Channel.Name, r.OK, r.Leaked,
			r.Attempt.Errno, r.Attempt.Step, r.SinkBytes, r.Attempt.Status, r.Why)
	}
}

// TestEscapeMatrix: with every layer on, every channel is closed with its specific
// error and its sink stays empty; the allowed doors work.
func TestEscapeMatrix(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	rep, err := escape.Run(exe(t), sandbox.Layers{})
	if err != nil {
		t.Fatal(err)
	}
	if t.Failed() || len(rep.Failures()) > 0 {
		logReport(t, rep)
	}
	for _, r := range rep.Failures() {
		t.Errorf("%s: %s", r.Channel.Name, r.Why)
	}
	if len(rep.Results) != len(escape.Channels) {
		t.Fatalf("%d results for %d channels", len(rep.Results), len(escape.Channels))
	}
}

// TestNegativeControls: with one layer off, the matrix sees the leak that layer closes.
func TestNegativeControls(t *testing.T) {
	for _, c := range escape.Controls {
		t.Run(c.Name, func(t *testing.T) {
			kerneltest.Require(t, c.Disable)
			rep, err := escape.Run(exe(t), c.Disable)
			if err != nil {
				t.Fatal(err)
			}
			caught, err := escape.CheckControl(c, rep)
			if err != nil {
				logReport(t, rep)
				t.Fatal(err)
			}
			t.Logf("%s: caught %v", c.Name, caught)
		})
	}
}
