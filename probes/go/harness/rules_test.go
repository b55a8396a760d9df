package harness

import (
	"errors"
	"testing"
)

func evs(es ...Event) []Event {
	for i := range es {
		es[i].Seq = i
		if es[i].Run == "" && (es[i].Kind == "effect" || es[i].Kind == "stop") {
			es[i].Run = "r1"
		}
	}
	return es
}

func eff(key, plan string) Event  { return Event{Kind: "effect", Key: key, Plan: plan} }
func pause(plan string) Event     { return Event{Kind: "pause", Plan: plan} }
func decide(d, plan string) Event { return Event{Kind: "decide", Decision: d, Plan: plan} }
func stop(how string) Event       { return Event{Kind: "stop", How: how} }

// TestApply checks that every rule can say VIOLATION and CLEAN.
func TestApply(t *testing.T) {
	cases := []struct {
		rule, name string
		events     []Event
		violation  bool
	}{
		{"B1", "sibling before the decision", evs(eff("send", "P1"), pause("P1"), decide("approve", "P1"), eff("delete", "P1")), true},
		{"B1", "effect while paused, never decided", evs(pause("P1"), eff("send", "P1")), true},
		{"B1", "effects after the decision", evs(pause("P1"), decide("approve", "P1"), eff("delete", "P1"), eff("send", "P1")), false},
		{"B1", "another plan's effect during the pause", evs(pause("P1"), eff("x", "P2"), decide("approve", "P1")), false},
		{"B2", "rejected plan's sibling committed earlier", evs(eff("send", "P1"), pause("P1"), decide("reject", "P1")), true},
		{"B2", "rejected plan's effect after the rejection", evs(pause("P1"), decide("reject", "P1"), eff("delete", "P1")), true},
		{"B2", "rejected plan with no effect", evs(pause("P1"), decide("reject", "P1")), false},
		{"B2", "approved plan's effects", evs(pause("P1"), decide("approve", "P1"), eff("delete", "P1")), false},
		{"B3", "effect twice", evs(eff("prepare", "P1"), pause("P1"), decide("approve", "P1"), eff("prepare", "P1")), true},
		{"B3", "distinct effects once each", evs(eff("a", "P1"), eff("b", "P1")), false},
		{"B4", "effect after cancel", evs(stop("cancel"), eff("w", "S1")), true},
		{"B4", "effect after timeout", evs(stop("timeout"), eff("w", "S1")), true},
		{"B4", "effect before cancel", evs(eff("w", "S1"), stop("cancel")), false},
		{"B4", "another run's effect after cancel", evs(stop("cancel"), Event{Kind: "effect", Key: "w", Plan: "S1", Run: "r2"}), false},
	}
	for _, c := range cases {
		t.Run(c.rule+"/"+c.name, func(t *testing.T) {
			v, err := Apply(c.rule, c.events)
			if err != nil {
				t.Fatal(err)
			}
			if v.Violation != c.violation {
				t.Fatalf("violation = %v, want %v (%s)", v.Violation, c.violation, v.Reason)
			}
		})
	}
}

func TestApplyUnknownRule(t *testing.T) {
	if _, err := Apply("B9", nil); !errors.Is(err, ErrUnknownRule) {
		t.Fatalf("err = %v, want ErrUnknownRule", err)
	}
}
