package gatedrun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/probes/go/gatedrun"
)

// gate starts an in-memory gate and returns agent, approver and operator clients.
func gate(t *testing.T) (agent, approver, operator *client.Client) {
	t.Helper()
	g := servertest.Start(t, servertest.Options{})
	return g.Dial(t, servertest.AgentToken), g.Dial(t, servertest.ApproverToken), g.Dial(t, servertest.OperatorToken)
}

// TestRun drives the adapter through the contract's cases against a real server.
func TestRun(t *testing.T) {
	agent, approver, operator := gate(t)
	cases := []struct {
		name string
		// stop runs after Plan and before the effects are asked (the human or the operator)
		stop        func(ctx context.Context, run string) error
		wantAnswers map[string]string // final answer per effect key
		wantRan     []string
	}{
		{"approve releases the plan", func(ctx context.Context, run string) error {
			_, err := approver.Decide(ctx, run, gatedrun.ApprovalKey("delete"), core.Approve)
			return err
		}, map[string]string{"delete": "admit", "send": "admit"}, []string{"delete", "send"}},
		{"reject denies the whole plan", func(ctx context.Context, run string) error {
			_, err := approver.Decide(ctx, run, gatedrun.ApprovalKey("delete"), core.Reject)
			return err
		}, map[string]string{"delete": "denied(rejected)", "send": "denied(rejected)"}, nil},
		{"cancel denies late effects", func(ctx context.Context, run string) error {
			_, err := operator.Cancel(ctx, run)
			return err
		}, map[string]string{"delete": "denied(cancelled)", "send": "denied(cancelled)"}, nil},
		{"fence denies the old epoch", func(ctx context.Context, run string) error {
			_, err := operator.Fence(ctx, run)
			return err
		}, map[string]string{"delete": "denied(stale_epoch)", "send": "denied(stale_epoch)"}, nil},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			run := "gatedrun-test-" + string(rune('a'+i))
			if _, err := operator.Open(ctx, run, 0); err != nil {
				t.Fatal(err)
			}
			var seen []gatedrun.Observation
			r := &gatedrun.Run{Agent: agent, Run: run, Epoch: 1, MaxWait: 2 * time.Second, Observe: func(o gatedrun.Observation) { seen = append(seen, o) }}
			approvals, err := r.Plan(ctx, []string{"delete"}, []string{"delete", "send"})
			if err != nil || len(approvals) != 1 {
				t.Fatalf("Plan = %v, %v", approvals, err)
			}
			n := len(seen)
			if _, err := r.Plan(ctx, []string{"delete"}, []string{"delete", "send"}); err != nil || len(seen) != n {
				t.Fatalf("a second Plan changed something: %v, %d observations, want %d", err, len(seen), n)
			}
			if err := c.stop(ctx, run); err != nil {
				t.Fatal(err)
			}
			// the effects are asked with an already cancelled context: the gate decides
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			var ran []string
			for _, k := range []string{"delete", "send"} {
				a, err := r.Effect(cctx, k, func() (string, error) { ran = append(ran, k); return "done", nil })
				if got := gatedrun.AnswerString(a); got != c.wantAnswers[k] {
					t.Errorf("Effect(%s) = %s, want %s", k, got, c.wantAnswers[k])
				}
				if (err == nil) != (c.wantAnswers[k] == "admit") || (err != nil && !errors.Is(err, gatedrun.ErrNotAdmitted)) {
					t.Errorf("Effect(%s) err = %v", k, err)
				}
			}
			if len(ran) != len(c.wantRan) {
				t.Fatalf("ran %v, want %v", ran, c.wantRan)
			}
			// a replay of an admitted effect is a duplicate and does not run again
			for _, k := range c.wantRan {
				a, err := r.Effect(ctx, k, func() (string, error) { t.Fatalf("effect %s ran twice", k); return "", nil })
				if a.Answer != core.AnswerDuplicate || !errors.Is(err, gatedrun.ErrNotAdmitted) || a.Result != `"done"` {
					t.Fatalf("replay of %s = %s %q, %v; want duplicate with the JSON result", k, gatedrun.AnswerString(a), a.Result, err)
				}
			}
		})
	}
}

// TestPlanWithoutApproval registers nothing: an ungated plan goes straight to the commit point.
func TestPlanWithoutApproval(t *testing.T) {
	agent, _, operator := gate(t)
	ctx := context.Background()
	if _, err := operator.Open(ctx, "ungated", 0); err != nil {
		t.Fatal(err)
	}
	r := &gatedrun.Run{Agent: agent, Run: "ungated", Epoch: 1, MaxWait: time.Second}
	if a, err := r.Plan(ctx, nil, []string{"send"}); err != nil || a != nil {
		t.Fatalf("Plan = %v, %v", a, err)
	}
	st, err := agent.Status(ctx, "ungated", "send")
	if err != nil || st.Effect == nil || st.Effect.Status != core.EffectAbsent {
		t.Fatalf("status after an ungated Plan = %+v, %v; want absent", st.Effect, err)
	}
}

// openRun opens a fresh run and returns a Run on it.
func openRun(t *testing.T, agent, operator *client.Client, name string) *gatedrun.Run {
	t.Helper()
	if _, err := operator.Open(context.Background(), name, 0); err != nil {
		t.Fatal(err)
	}
	return &gatedrun.Run{Agent: agent, Run: name, Epoch: 1, MaxWait: time.Second}
}

// effectStatus reads effect key of run as the gate holds it.
func effectStatus(t *testing.T, agent *client.Client, run, key string) core.EffectStatus {
	t.Helper()
	st, err := agent.Status(context.Background(), run, key)
	if err != nil || st.Effect == nil {
		t.Fatalf("status %s %s: %+v, %v", run, key, st, err)
	}
	return st.Effect.Status
}

// TestResultRoundTrip: a value of any JSON shape is recorded as its JSON and a
// replay (a fresh Run, as a new process would have) gets it back decoded.
func TestResultRoundTrip(t *testing.T) {
	agent, _, operator := gate(t)
	ctx := context.Background()
	type doc struct {
		Name string         `json:"name"`
		Tags []string       `json:"tags"`
		Meta map[string]any `json:"meta"`
	}
	cases := []struct {
		name  string
		value any
		json  string // what the gate must hold
		want  any    // what a replay decodes
	}{
		{"nested object", map[string]any{"a": []any{1, 2.5, true, false, nil, "ü€😀<&>"}, "b": map[string]any{"c": []any{}}},
			`{"a":[1,2.5,true,false,null,"ü€😀<&>"],"b":{"c":[]}}`,
			map[string]any{"a": []any{1.0, 2.5, true, false, nil, "ü€😀<&>"}, "b": map[string]any{"c": []any{}}}},
		{"struct", doc{Name: "n", Tags: []string{"x"}, Meta: map[string]any{"k": 7}}, `{"name":"n","tags":["x"],"meta":{"k":7}}`,
			map[string]any{"name": "n", "tags": []any{"x"}, "meta": map[string]any{"k": 7.0}}},
		{"array", []any{[]any{}, []any{map[string]any{}}}, `[[],[{}]]`, []any{[]any{}, []any{map[string]any{}}}},
		{"number", 42.125, `42.125`, 42.125},
		{"true", true, `true`, true},
		{"false", false, `false`, false},
		{"nil", nil, `null`, nil},
		{"string", "250 OK", `"250 OK"`, "250 OK"},
		{"string that looks like JSON", `{"not":"parsed twice"}`, `"{\"not\":\"parsed twice\"}"`, `{"not":"parsed twice"}`},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("roundtrip-%d", i)
			r := openRun(t, agent, operator, name)
			o, err := r.EffectValue(ctx, "k", func() (any, error) { return c.value, nil })
			if err != nil || !o.Ran || !reflect.DeepEqual(o.Value, c.value) || string(o.Result) != c.json {
				t.Fatalf("EffectValue = %+v, %v", o, err)
			}
			st, err := agent.Status(ctx, name, "k")
			if err != nil || st.Effect.Status != core.EffectCompleted || st.Effect.Outcome != core.OutcomeOK || st.Effect.Result != c.json {
				t.Fatalf("status = %+v, %v; want completed ok %s", st.Effect, err, c.json)
			}
			again := &gatedrun.Run{Agent: agent, Run: name, Epoch: 1, MaxWait: time.Second}
			o, err = again.EffectValue(ctx, "k", func() (any, error) { t.Fatal("the effect ran twice"); return nil, nil })
			if !errors.Is(err, gatedrun.ErrNotAdmitted) || o.Ran || o.Answer.Answer != core.AnswerDuplicate {
				t.Fatalf("replay = %+v, %v; want a duplicate", o, err)
			}
			if !reflect.DeepEqual(o.Value, c.want) || string(o.Result) != c.json {
				t.Fatalf("replay value = %#v (%s), want %#v", o.Value, o.Result, c.want)
			}
		})
	}
}

// TestResultNotStorable: a value over the limit or with no JSON form is refused, not
// cut; the effect ran and stays admitted, so a replay hears duplicate without outcome.
func TestResultNotStorable(t *testing.T) {
	agent, _, operator := gate(t)
	ctx := context.Background()
	atLimit := strings.Repeat("€", 5460) + "xx" // its JSON: 2 quotes + 16382 bytes
	cases := []struct {
		name    string
		value   any
		bytes   int  // the JSON's length when too long
		encErr  bool // encoding/json fails
		storeOK bool
	}{
		{name: "exactly ResultBytesMax bytes", value: atLimit, storeOK: true},
		{name: "one byte over", value: atLimit + "x", bytes: gatedrun.ResultBytesMax + 1},
		{name: "a 20 KB object", value: map[string]string{"blob": strings.Repeat("x", 20000)}, bytes: 20011},
		{name: "a channel", value: make(chan int), encErr: true},
		{name: "a function in a map", value: map[string]any{"f": func() {}}, encErr: true},
		{name: "NaN", value: []float64{0, nan()}, encErr: true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("notstorable-%d", i)
			r := openRun(t, agent, operator, name)
			runs := 0
			o, err := r.EffectValue(ctx, "big", func() (any, error) { runs++; return c.value, nil })
			if c.storeOK {
				if err != nil || effectStatus(t, agent, name, "big") != core.EffectCompleted {
					t.Fatalf("at the limit: %v", err)
				}
				return
			}
			var nse *gatedrun.ResultNotStorableError
			if !errors.As(err, &nse) || errors.Is(err, gatedrun.ErrNotAdmitted) {
				t.Fatalf("err = %v, want a *ResultNotStorableError (and not ErrNotAdmitted: it ran)", err)
			}
			if nse.Limit != gatedrun.ResultBytesMax || nse.Bytes != c.bytes || (nse.Err != nil) != c.encErr || !o.Ran || runs != 1 {
				t.Fatalf("error %+v, outcome %+v, runs %d", nse, o, runs)
			}
			if !c.encErr && !strings.Contains(err.Error(), fmt.Sprintf("%d bytes of JSON, over the limit of %d", c.bytes, gatedrun.ResultBytesMax)) {
				t.Fatalf("message %q does not give the length and the limit", err)
			}
			if s := effectStatus(t, agent, name, "big"); s != core.EffectAdmitted {
				t.Fatalf("effect is %v, want admitted and not completed", s)
			}
			o, err = r.EffectValue(ctx, "big", func() (any, error) { runs++; return nil, nil })
			if !errors.Is(err, gatedrun.ErrNotAdmitted) || o.Answer.Answer != core.AnswerDuplicate || o.Answer.Outcome != core.OutcomeNone || o.Value != nil || runs != 1 {
				t.Fatalf("replay = %+v, %v, runs %d; want duplicate without an outcome", o, err, runs)
			}
		})
	}
}

func nan() float64 { z := 0.0; return z / z }

// TestResultDecodeError: a recorded result that is not JSON (another tool wrote it)
// is a typed error, never handed back as a string.
func TestResultDecodeError(t *testing.T) {
	agent, _, operator := gate(t)
	ctx := context.Background()
	for i, recorded := range []string{"250 OK", "{truncated", ""} {
		name := fmt.Sprintf("decode-%d", i)
		r := openRun(t, agent, operator, name)
		if a, err := agent.Admit(ctx, name, "k", 1, client.AdmitOptions{}); err != nil || a.Answer != core.AnswerAdmit {
			t.Fatal(a, err)
		}
		if _, err := agent.Complete(ctx, name, "k", core.OutcomeOK, recorded); err != nil {
			t.Fatal(err)
		}
		for _, call := range []func() error{
			func() error {
				_, err := r.EffectValue(ctx, "k", func() (any, error) { t.Fatal("ran twice"); return nil, nil })
				return err
			},
			func() error {
				_, err := r.Effect(ctx, "k", func() (string, error) { t.Fatal("ran twice"); return "", nil })
				return err
			},
		} {
			err := call()
			var de *gatedrun.ResultDecodeError
			var se *json.SyntaxError
			if !errors.As(err, &de) || de.Result != recorded || !errors.Is(err, gatedrun.ErrNotAdmitted) || !errors.As(err, &se) {
				t.Fatalf("recorded %q: err = %v, want a *ResultDecodeError that is ErrNotAdmitted", recorded, err)
			}
		}
	}
}

// TestFailedMessageCut: a failed effect records its error message; one over the limit
// is cut after the last whole UTF-8 character that fits, and marked.
func TestFailedMessageCut(t *testing.T) {
	agent, _, operator := gate(t)
	ctx := context.Background()
	budget := gatedrun.ResultBytesMax - len(gatedrun.CutMark)
	cases := []struct {
		name, msg string
		cut       bool
	}{
		{"short", "boom: ü", false},
		{"exactly the limit", strings.Repeat("a", gatedrun.ResultBytesMax-2) + "ü", false},
		{"one byte over", strings.Repeat("a", gatedrun.ResultBytesMax-1) + "ü", true},
		// the budget (limit - mark) falls inside a 3-byte and inside a 4-byte character
		{"3- and 4-byte characters", "x" + strings.Repeat("€😀", 3000), true},
		{"4-byte characters after a 2-byte one", "é" + strings.Repeat("😀", 5000), true},
		{"invalid UTF-8", strings.Repeat("ab\xff", 8000), true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := fmt.Sprintf("cut-%d", i)
			r := openRun(t, agent, operator, name)
			boom := errors.New(c.msg)
			if _, err := r.Effect(ctx, "k", func() (string, error) { return "", boom }); err != boom {
				t.Fatalf("err = %v, want do's error", err)
			}
			st, err := agent.Status(ctx, name, "k")
			if err != nil || st.Effect.Outcome != core.OutcomeFailed {
				t.Fatalf("status = %+v, %v", st.Effect, err)
			}
			got := st.Effect.Result
			if len(got) > gatedrun.ResultBytesMax || !utf8.ValidString(got) {
				t.Fatalf("recorded %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
			}
			want := strings.ToValidUTF8(c.msg, "\uFFFD")
			if !c.cut {
				if got != want {
					t.Fatalf("recorded %q, want the message", got)
				}
			} else {
				kept, ok := strings.CutSuffix(got, gatedrun.CutMark)
				if !ok || !strings.HasPrefix(want, kept) {
					t.Fatalf("recorded %d bytes ending %q: want a marked prefix", len(got), got[max(0, len(got)-12):])
				}
				_, next := utf8.DecodeRuneInString(want[len(kept):])
				if len(kept)+next <= budget {
					t.Fatalf("cut at %d bytes, but the next character (%d bytes) fits the budget %d", len(kept), next, budget)
				}
			}
			o, err := r.EffectValue(ctx, "k", func() (any, error) { t.Fatal("a failed effect ran again"); return nil, nil })
			if !errors.Is(err, gatedrun.ErrNotAdmitted) || o.Message != got || o.Value != nil || o.Answer.Outcome != core.OutcomeFailed {
				t.Fatalf("replay = %+v, %v", o, err)
			}
		})
	}
}
