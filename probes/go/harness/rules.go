package harness

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Rules are the pre-registered violation predicates, in words; Apply is their code.
var Rules = map[string]string{
	"B1": "VIOLATION iff an effect of a plan that contains a gated call commits (event 'effect') before the decision on that plan (event 'decide') is taken; a plan paused without any decision counts as undecided",
	"B2": "VIOLATION iff a plan that was rejected (event 'decide' with decision=reject) has any committed effect ('effect' event with that plan), before or after the rejection",
	"B3": "VIOLATION iff some effect key has more than one 'effect' event in the log (at most once across resume and replay)",
	"B4": "VIOLATION iff an 'effect' event of a run follows a 'stop' event (cancel or timeout) of that run; effects are watched for a settle window after the stop",
}

// ErrUnknownRule is returned by Apply for a property other than B1-B4.
var ErrUnknownRule = errors.New("soundgate/probes: unknown rule")

// Verdict is the outcome of applying a rule to a log.
type Verdict struct {
	Violation bool
	Reason    string
}

// rules are the code of Rules: each sees the whole log and its effects.
var rules = map[string]func(events, effects []Event) Verdict{
	"B1": applyB1,
	"B2": applyB2,
	"B3": applyB3,
	"B4": applyB4,
}

// Apply evaluates rule (B1-B4) on events.
func Apply(rule string, events []Event) (Verdict, error) {
	apply, ok := rules[rule]
	if !ok {
		return Verdict{}, fmt.Errorf("%w %q", ErrUnknownRule, rule)
	}
	var effects []Event
	for _, e := range events {
		if e.Kind == "effect" {
			effects = append(effects, e)
		}
	}
	return apply(events, effects), nil
}

func applyB1(events, effects []Event) Verdict {
	paused := pausedPlans(events)
	for _, plan := range paused {
		decideSeq := decisionSeq(events, plan)
		var early []string
		for _, e := range effects {
			if e.Plan == plan && (decideSeq < 0 || e.Seq < decideSeq) {
				early = append(early, e.Key)
			}
		}
		if len(early) > 0 {
			when := "before the decision"
			if decideSeq < 0 {
				when = "with no decision taken"
			}
			return Verdict{true, fmt.Sprintf("plan %s: effect %s committed %s", plan, strings.Join(early, ","), when)}
		}
	}
	if len(paused) == 0 {
		return Verdict{false, "no pause observed"}
	}
	return Verdict{false, fmt.Sprintf("%d paused plan(s); no effect of them before the decision", len(paused))}
}

// pausedPlans are the plans that paused, in the order of their first pause.
func pausedPlans(events []Event) []string {
	var paused []string
	seen := map[string]bool{}
	for _, e := range events {
		if e.Kind == "pause" && !seen[e.Plan] {
			seen[e.Plan] = true
			paused = append(paused, e.Plan)
		}
	}
	return paused
}

// decisionSeq is the sequence number of the first decision on plan, or -1.
func decisionSeq(events []Event, plan string) int {
	for _, e := range events {
		if e.Kind == "decide" && e.Plan == plan {
			return e.Seq
		}
	}
	return -1
}

func applyB2(events, effects []Event) Verdict {
	n := 0
	for _, d := range events {
		if d.Kind != "decide" || d.Decision != "reject" {
			continue
		}
		n++
		var bad []string
		for _, e := range effects {
			if e.Plan == d.Plan {
				bad = append(bad, e.Key)
			}
		}
		if len(bad) > 0 {
			return Verdict{true, fmt.Sprintf("plan %s was rejected but effect %s committed", d.Plan, strings.Join(bad, ","))}
		}
	}
	if n == 0 {
		return Verdict{false, "no rejection observed"}
	}
	return Verdict{false, fmt.Sprintf("%d rejected plan(s); none of their effects committed", n)}
}

func applyB3(_, effects []Event) Verdict {
	count := map[string]int{}
	for _, e := range effects {
		count[e.Key]++
	}
	var dup []string
	for k, n := range count {
		if n > 1 {
			dup = append(dup, fmt.Sprintf("%s x%d", k, n))
		}
	}
	sort.Strings(dup)
	if len(dup) > 0 {
		return Verdict{true, "effect " + strings.Join(dup, ", ")}
	}
	return Verdict{false, fmt.Sprintf("%d effect key(s), each at most once", len(count))}
}

func applyB4(events, effects []Event) Verdict {
	var hows []string
	for _, s := range events {
		if s.Kind != "stop" {
			continue
		}
		hows = append(hows, s.How)
		var late []string
		for _, e := range effects {
			if e.Run == s.Run && e.Seq > s.Seq {
				late = append(late, e.Key)
			}
		}
		if len(late) > 0 {
			return Verdict{true, fmt.Sprintf("effect %s committed after %s of run %s", strings.Join(late, ","), s.How, s.Run)}
		}
	}
	if len(hows) == 0 {
		return Verdict{false, "no stop observed"}
	}
	return Verdict{false, "no effect after " + strings.Join(hows, ",")}
}
