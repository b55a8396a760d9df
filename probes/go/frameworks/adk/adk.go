package adk

import (
	"context"
	"encoding/json"
	"iter"
	"strings"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/functiontool"
	"google.golang.org/adk/tool/toolconfirmation"
	"google.golang.org/genai"

	"github.com/soundgate/soundgate/probes/go/harness"
)

const (
	plan    = "P1"
	appName = "probe"
	userID  = "user"
)

// scripted is the fake model: turn i answers with the calls of turns[i];
// when every scripted turn has its results, or a result reports a
// rejection, it answers with text and the run ends.
type scripted struct {
	env   harness.Env
	turns [][]*genai.FunctionCall
}

func (m *scripted) Name() string { return "scripted" }

func (m *scripted) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	answered := map[string]bool{}
	rejected := false
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			if fr := p.FunctionResponse; fr != nil && fr.Name != toolconfirmation.FunctionCallName {
				answered[fr.ID] = true
				b, _ := json.Marshal(fr.Response)
				if strings.Contains(strings.ToLower(string(b)), "reject") {
					rejected = true
				}
			}
		}
	}
	turn := 0
	for turn < len(m.turns) && allAnswered(m.turns[turn], answered) {
		turn++
	}
	var content *genai.Content
	if rejected || turn >= len(m.turns) {
		content = genai.NewContentFromText("done", genai.RoleModel)
	} else {
		var parts []*genai.Part
		var names []string
		for _, fc := range m.turns[turn] {
			parts = append(parts, &genai.Part{FunctionCall: fc})
			names = append(names, fc.Name)
		}
		// the plan hook (a model wrapper): the turn's calls are announced to the gate
		gated, effects := harness.TurnPlan(names)
		if err := m.env.Plan(ctx, plan, gated, effects); err != nil {
			return func(yield func(*model.LLMResponse, error) bool) { yield(nil, err) }
		}
		content = &genai.Content{Role: genai.RoleModel, Parts: parts}
	}
	return func(yield func(*model.LLMResponse, error) bool) {
		yield(&model.LLMResponse{Content: content, TurnComplete: true}, nil)
	}
}

func allAnswered(calls []*genai.FunctionCall, answered map[string]bool) bool {
	for _, c := range calls {
		if !answered[c.ID] {
			return false
		}
	}
	return true
}

type deleteArgs struct {
	Path string `json:"path"`
}
type sendArgs struct {
	To string `json:"to"`
}
type result struct {
	Status string `json:"status"`
}

func newRunner(ctx context.Context, env harness.Env, turns [][]*genai.FunctionCall, body string) (*runner.Runner, string, error) {
	del, err := functiontool.New(functiontool.Config{Name: "delete_file", Description: "delete a file (needs approval)", RequireConfirmation: true},
		func(tc agent.ToolContext, a deleteArgs) (result, error) {
			_, err := env.GatedStep(tc, "delete", plan, harness.StepOptions{Gated: true})
			return result{"deleted"}, err
		})
	if err != nil {
		return nil, "", err
	}
	send, err := functiontool.New(functiontool.Config{Name: "send_email", Description: "send an email"},
		func(tc agent.ToolContext, a sendArgs) (result, error) {
			if err := harness.SendEmail(tc, env, plan, body); err != nil {
				return result{}, err
			}
			return result{"sent"}, nil
		})
	if err != nil {
		return nil, "", err
	}
	a, err := llmagent.New(llmagent.Config{Name: "probe", Model: &scripted{env: env, turns: turns}, Instruction: "scripted", Tools: []tool.Tool{del, send}})
	if err != nil {
		return nil, "", err
	}
	svc := session.InMemoryService()
	s, err := svc.Create(ctx, &session.CreateRequest{AppName: appName, UserID: userID})
	if err != nil {
		return nil, "", err
	}
	r, err := runner.New(runner.Config{AppName: appName, Agent: a, SessionService: svc})
	return r, s.Session.ID(), err
}

// turn runs one user turn and returns the confirmation requests it produced.
func turn(ctx context.Context, env harness.Env, r *runner.Runner, sid string, msg *genai.Content) ([]*genai.FunctionCall, error) {
	var asks []*genai.FunctionCall
	for ev, err := range r.Run(ctx, userID, sid, msg, agent.RunConfig{}) {
		if err != nil {
			return asks, err
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			if fc := p.FunctionCall; fc != nil && fc.Name == toolconfirmation.FunctionCallName {
				asks = append(asks, fc)
			}
		}
	}
	return asks, nil
}

func fc(id, name string, args map[string]any) *genai.FunctionCall {
	return &genai.FunctionCall{ID: id, Name: name, Args: args}
}

func turns(parallel bool) [][]*genai.FunctionCall {
	del := fc("call_delete", "delete_file", map[string]any{"path": "/data"})
	send := fc("call_send", "send_email", map[string]any{"to": "ops@example.org"})
	if parallel {
		return [][]*genai.FunctionCall{{del, send}}
	}
	return [][]*genai.FunctionCall{{del}, {send}}
}

func approvalRun(c harness.Approval) func(context.Context, harness.Env) error {
	return func(ctx context.Context, env harness.Env) error {
		r, sid, err := newRunner(ctx, env, turns(c.Parallel), "")
		if err != nil {
			return err
		}
		asks, err := turn(ctx, env, r, sid, genai.NewContentFromText("clean up and tell ops", genai.RoleUser))
		for round := 0; err == nil && len(asks) > 0 && round < 8; round++ {
			var names []string
			for _, a := range asks {
				name := "?"
				if oc, err := toolconfirmation.OriginalCallFrom(a); err == nil {
					name = oc.Name
				}
				names = append(names, name)
			}
			pending := asks
			err = env.Paused(ctx, plan, names, c.Decision, func(ctx context.Context, d string) error {
				var parts []*genai.Part
				for _, a := range pending {
					parts = append(parts, &genai.Part{FunctionResponse: &genai.FunctionResponse{ID: a.ID, Name: toolconfirmation.FunctionCallName,
						Response: map[string]any{"confirmed": d == "approve"}}})
				}
				var e error
				asks, e = turn(ctx, env, r, sid, &genai.Content{Role: genai.RoleUser, Parts: parts})
				if e == nil && c.Replay {
					// the client did not hear the answer and sends the confirmation again
					env.Note("the confirmation response is delivered a second time (a client retry)")
					_, e = turn(ctx, env, r, sid, &genai.Content{Role: genai.RoleUser, Parts: parts})
				}
				return e
			})
		}
		return err
	}
}

func stopRun(how, body string, control bool) func(context.Context, harness.Env) error {
	return func(ctx context.Context, env harness.Env) error {
		send := fc("call_send", "send_email", map[string]any{"to": "ops@example.org"})
		r, sid, err := newRunner(ctx, env, [][]*genai.FunctionCall{{send}}, body)
		if err != nil {
			return err
		}
		return harness.StopDrive(ctx, env, how, control, func(ctx context.Context) error {
			_, err := turn(ctx, env, r, sid, genai.NewContentFromText("write it", genai.RoleUser))
			return err
		})
	}
}

// Confirmation is the probe set of tool confirmation with parallel function calls.
func Confirmation() harness.Framework {
	return harness.Framework{
		Name: "Google ADK for Go", Module: "google.golang.org/adk", ID: "adk_confirmation",
		Primitive: "tool confirmation (RequireConfirmation) with parallel function calls",
		Probes: append(harness.ApprovalProbes(harness.ApprovalWords{
			Parallel: "one model turn calls delete_file (RequireConfirmation) and send_email in parallel",
			Sequence: "delete_file in one turn, send_email in the next",
			Resume:   "the confirmation response resumes the call",
			Reject:   "the scripted model stops at the rejection",
			Replay:   "the confirmation response is delivered a second time (a client retry after a lost answer)",
		}, approvalRun), harness.StopProbes(harness.StopWords{Context: "run context", Body: "tool", Run: "run"}, stopRun)...),
	}
}
