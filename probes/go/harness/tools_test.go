package harness

import (
	"context"
	"slices"
	"testing"
)

func TestTurnPlan(t *testing.T) {
	gated, effects := TurnPlan([]string{"delete_file", "send_email"})
	if !slices.Equal(gated, []string{"delete"}) || !slices.Equal(effects, []string{"delete", "send_email"}) {
		t.Fatalf("parallel turn: gated %v effects %v", gated, effects)
	}
	gated, effects = TurnPlan([]string{"send_email"})
	if gated != nil || !slices.Equal(effects, []string{"send_email"}) {
		t.Fatalf("send_email alone: gated %v effects %v", gated, effects)
	}
}

// TestSendEmail checks the two shapes of the send_email tool: the sibling of
// an approval probe and the write of a B4 probe.
func TestSendEmail(t *testing.T) {
	for _, c := range []struct {
		body, key, plan string
	}{{"", "send_email", "P1"}, {"cooperative", "write_file", "S1"}, {"uncooperative", "write_file", "S1"}} {
		env := NewUnmodified()
		if err := SendEmail(context.Background(), env, "P1", c.body); err != nil {
			t.Fatal(err)
		}
		ev := env.Log().Events()
		if len(ev) != 1 || ev[0].Kind != "effect" || ev[0].Key != c.key || ev[0].Plan != c.plan {
			t.Errorf("body %q: events %+v, want one effect %s of %s", c.body, ev, c.key, c.plan)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	env := NewUnmodified()
	if err := SendEmail(ctx, env, "P1", "cooperative"); err == nil || len(env.Log().Events()) != 0 {
		t.Fatalf("cancelled cooperative body: err %v, events %+v; want an error and no effect", err, env.Log().Events())
	}
}
