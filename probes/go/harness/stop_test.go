package harness

import (
	"context"
	"testing"
)

// TestStopProbes checks the B4 cases, their order, their wording and the
// arguments each passes to the framework's run.
func TestStopProbes(t *testing.T) {
	type call struct {
		how, body string
		control   bool
	}
	var calls []call
	run := func(how, body string, control bool) func(context.Context, Env) error {
		calls = append(calls, call{how, body, control})
		return func(context.Context, Env) error { return nil }
	}
	ps := StopProbes(StopWords{Context: "run context", Body: "tool", Run: "run"}, run)
	want := []struct {
		cas, about string
		call       call
	}{
		{"cancel/cooperative", "run context cancelled while the tool body runs; body observes ctx", call{"cancel", "cooperative", false}},
		{"cancel/uncooperative", "run context cancelled while the tool body runs; body ignores ctx", call{"cancel", "uncooperative", false}},
		{"timeout/cooperative", "run context deadline passes while the tool body runs; body observes ctx", call{"timeout", "cooperative", false}},
		{"timeout/uncooperative", "run context deadline passes while the tool body runs; body ignores ctx", call{"timeout", "uncooperative", false}},
		{"control", "run completes, then the context is cancelled", call{"cancel", "uncooperative", true}},
	}
	if len(ps) != len(want) || len(calls) != len(want) {
		t.Fatalf("%d probes, %d runs built, want %d", len(ps), len(calls), len(want))
	}
	for i, w := range want {
		if p := ps[i]; p.Property != "B4" || p.Case != w.cas || p.About != w.about || p.Run == nil || calls[i] != w.call {
			t.Errorf("probe %d = %s %s %q (run %+v), want B4 %s %q (run %+v)", i, p.Property, p.Case, p.About, calls[i], w.cas, w.about, w.call)
		}
	}
}
