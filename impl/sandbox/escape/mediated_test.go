package escape_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/sandbox"
	"github.com/soundgate/soundgate/impl/sandbox/internal/kerneltest"
)

// TestMediatedRun is `soundgate run` end to end against a real gate server: the agent
// in the sandbox makes a real HTTP request while its run is paused; nothing reaches the
// upstream until the approver approves; after a cancel the next agent's request is
// refused and again nothing reaches the upstream.
func TestMediatedRun(t *testing.T) {
	kerneltest.Require(t, sandbox.Layers{})
	ctx := context.Background()
	ops, alice, agent := gate(t)
	var hits atomic.Int64
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "sent")
	}))
	defer up.Close()
	if _, err := ops.Open(ctx, "run-1", 0); err != nil {
		t.Fatal(err)
	}
	// The framework pauses the run: a gated step waits for its approval.
	if res, err := agent.Admit(ctx, "run-1", "plan", 1, client.AdmitOptions{Gated: true}); err != nil || res.Answer != core.AnswerHeld {
		t.Fatalf("gated admit: %+v %v", res, err)
	}
	runAgent := func(key string) (chan int, *bytes.Buffer) {
		var out bytes.Buffer
		proxy := &egress.Proxy{Admitter: &egress.ClientAdmitter{C: agent}, Run: "run-1", HeldWaitMax: 20 * time.Second}
		done := startProxied(t, sandbox.Config{
			Argv:     []string{exe(t)},
			Env:      []string{"SOUNDGATE_ESCAPE_PROBE=get " + up.URL + "/effect " + key, "HTTP_PROXY=http://127.0.0.1:3128"},
			Dir:      "/",
			ReadOnly: []string{filepath.Dir(exe(t))},
			Stdout:   &out, Stderr: &out,
		}, proxy)
		return done, &out
	}
	done, out := runAgent("fetch-1")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st, err := agent.Status(ctx, "run-1", "fetch-1")
		if err == nil && st.Effect != nil && st.Effect.Status == core.EffectHeld {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent's request never became held: %v %+v; agent said %q", err, st, out.String())
		}
	}
	time.Sleep(200 * time.Millisecond)
	if hits.Load() != 0 {
		t.Fatal("the request reached the upstream while the run was paused")
	}
	if _, err := alice.Decide(ctx, "run-1", "plan", core.Approve); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 || hits.Load() != 1 {
			t.Fatalf("after approve: exit %d, upstream hits %d; agent said %q", code, hits.Load(), out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not finish after approve")
	}
	if _, err := ops.Cancel(ctx, "run-1"); err != nil {
		t.Fatal(err)
	}
	done, out = runAgent("fetch-2")
	select {
	case code := <-done:
		if code != 3 || hits.Load() != 1 || !strings.Contains(out.String(), "status 403") || !strings.Contains(out.String(), "cancelled") {
			t.Fatalf("after cancel: exit %d, upstream hits %d; agent said %q", code, hits.Load(), out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the agent did not finish after cancel")
	}
}
