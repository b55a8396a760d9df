package egress_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/egress"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// TestClientAdmitterAgainstServer runs the proxy against a real gate server: held
// while the run is paused and forwarded after approve; denied after a fence
// (stale_epoch: the sandboxed attempt keeps its epoch) and after cancel.
func TestClientAdmitterAgainstServer(t *testing.T) {
	ctx := context.Background()
	g := servertest.Start(t, servertest.Options{})
	ops, alice, agent := g.Dial(t, servertest.OperatorToken), g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.AgentToken)
	if _, err := ops.Open(ctx, "r1", 0); err != nil {
		t.Fatal(err)
	}
	up := newUpstream(t)
	var log logged
	hc, _ := startProxy(t, &egress.Proxy{Admitter: &egress.ClientAdmitter{C: agent}, Run: "r1", Log: log.add})
	get := func(key string) (int, string) {
		req, _ := http.NewRequest("GET", up.URL+"/"+key, nil)
		req.Header.Set(egress.HeaderKey, key)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("a"); code != 200 || up.hits.Load() != 1 {
		t.Fatalf("admit: %d, hits %d", code, up.hits.Load())
	}
	// Pause: a gated effect of the run waits for its approval.
	if res, err := agent.Admit(ctx, "r1", "plan", 1, clientOpts(true)); err != nil || res.Answer != core.AnswerHeld {
		t.Fatalf("gated admit: %v %v", res, err)
	}
	done := make(chan int, 1)
	go func() { code, _ := get("b"); done <- code }()
	time.Sleep(300 * time.Millisecond)
	if up.hits.Load() != 1 {
		t.Fatal("a request reached upstream while the run was paused")
	}
	if _, err := alice.Decide(ctx, "r1", "plan", core.Approve); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 200 || up.hits.Load() != 2 {
			t.Fatalf("after approve: %d, hits %d", code, up.hits.Load())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the held request was not forwarded after approve")
	}
	if _, err := ops.Fence(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if code, body := get("c"); code != 403 || !strings.Contains(body, "stale_epoch") || up.hits.Load() != 2 {
		t.Fatalf("after fence: %d %q, hits %d", code, body, up.hits.Load())
	}
	if _, err := ops.Cancel(ctx, "r1"); err != nil {
		t.Fatal(err)
	}
	if code, body := get("d"); code != 403 || !strings.Contains(body, "cancelled") || up.hits.Load() != 2 {
		t.Fatalf("after cancel: %d %q, hits %d", code, body, up.hits.Load())
	}
	if st, err := agent.Status(ctx, "r1", "a"); err != nil || st.Effect == nil || st.Effect.Status != core.EffectCompleted {
		t.Fatalf("effect a: %+v %v", st, err)
	}
}

func clientOpts(gated bool) client.AdmitOptions { return client.AdmitOptions{Gated: gated} }
