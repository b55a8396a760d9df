package genkit

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/soundgate/soundgate/probes/go/harness"
)

const plan = "P1"

var (
	initOnce sync.Once
	g        *genkit.Genkit
)

// instance returns the one Genkit instance of the process; each probe
// defines its tools and model under names unique to that probe run.
func instance() *genkit.Genkit {
	initOnce.Do(func() { g = genkit.Init(context.Background()) })
	return g
}

type deleteArgs struct {
	Path string `json:"path"`
}
type sendArgs struct {
	To string `json:"to"`
}

var seq struct {
	sync.Mutex
	n int
}

func uniq(prefix string) string {
	seq.Lock()
	defer seq.Unlock()
	seq.n++
	return prefix + "_" + itoa(seq.n)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

type setup struct {
	model ai.Model
	del   *ai.ToolDef[deleteArgs, string]
	send  *ai.ToolDef[sendArgs, string]
}

func newSetup(env harness.Env, turns [][]string, body string) *setup {
	gk := instance()
	s := &setup{}
	s.del = genkit.DefineTool(gk, uniq("delete_file"), "delete a file (needs approval)", func(tc *ai.ToolContext, a deleteArgs) (string, error) {
		if tc.Resumed == nil {
			return "", tc.Interrupt(&ai.InterruptOptions{Metadata: map[string]any{"plan": plan, "ask": "approve delete " + a.Path + "?"}})
		}
		if _, err := env.GatedStep(tc, "delete", plan, harness.StepOptions{Gated: true}); err != nil {
			return "", err
		}
		return "deleted", nil
	})
	s.send = genkit.DefineTool(gk, uniq("send_email"), "send an email", func(tc *ai.ToolContext, a sendArgs) (string, error) {
		if err := harness.SendEmail(tc, env, plan, body); err != nil {
			return "", err
		}
		return "sent", nil
	})
	names := map[string]string{"delete_file": s.del.Name(), "send_email": s.send.Name()}
	s.model = genkit.DefineModel(gk, "probe/"+uniq("scripted"), &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, Tools: true}},
		scriptedModel(env, turns, names))
	return s
}

// scriptedModel is the fake model: it requests the tools (by their names in
// names) of the first turn whose requests are not all answered, and answers
// "done" when every turn is answered or a tool reported a rejection.
func scriptedModel(env harness.Env, turns [][]string, names map[string]string) ai.ModelFunc {
	return func(ctx context.Context, req *ai.ModelRequest, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		answered, rejected := toolResponses(req)
		turn := 0
		for turn < len(turns) && all(turns[turn], answered) {
			turn++
		}
		msg := &ai.Message{Role: ai.RoleModel}
		if rejected || turn >= len(turns) {
			msg.Content = []*ai.Part{ai.NewTextPart("done")}
			return &ai.ModelResponse{Request: req, Message: msg}, nil
		}
		// the plan hook (a model wrapper): the turn's requests are announced to the gate
		gated, effects := harness.TurnPlan(turns[turn])
		if err := env.Plan(ctx, plan, gated, effects); err != nil {
			return nil, err
		}
		for _, ref := range turns[turn] {
			in := map[string]any{"path": "/data"}
			if ref == "send_email" {
				in = map[string]any{"to": "ops@example.org"}
			}
			msg.Content = append(msg.Content, ai.NewToolRequestPart(&ai.ToolRequest{Name: names[ref], Ref: ref, Input: in}))
		}
		return &ai.ModelResponse{Request: req, Message: msg}, nil
	}
}

// toolResponses reads the tool responses of the history: the refs answered,
// and whether one of them reports a rejection.
func toolResponses(req *ai.ModelRequest) (answered map[string]bool, rejected bool) {
	answered = map[string]bool{}
	for _, m := range req.Messages {
		for _, p := range m.Content {
			if p.IsToolResponse() {
				answered[p.ToolResponse.Ref] = true
				b, _ := json.Marshal(p.ToolResponse.Output)
				if strings.Contains(string(b), "rejected") {
					rejected = true
				}
			}
		}
	}
	return answered, rejected
}

func all(refs []string, answered map[string]bool) bool {
	for _, r := range refs {
		if !answered[r] {
			return false
		}
	}
	return true
}

func (s *setup) generate(ctx context.Context, opts ...ai.GenerateOption) (*ai.ModelResponse, error) {
	base := []ai.GenerateOption{ai.WithModel(s.model), ai.WithTools(s.del, s.send)}
	return genkit.Generate(ctx, instance(), append(base, opts...)...)
}

func approvalRun(c harness.Approval) func(context.Context, harness.Env) error {
	turns := [][]string{{"delete_file"}, {"send_email"}}
	if c.Parallel {
		turns = [][]string{{"delete_file", "send_email"}}
	}
	return func(ctx context.Context, env harness.Env) error {
		s := newSetup(env, turns, "")
		res, err := s.generate(ctx, ai.WithPrompt("clean up and tell ops"))
		for round := 0; err == nil && res.FinishReason == "interrupted" && round < 8; round++ {
			parts := res.Interrupts()
			var asks []string
			for _, p := range parts {
				asks = append(asks, p.ToolRequest.Ref)
			}
			prev := res
			err = env.Paused(ctx, plan, asks, c.Decision, func(ctx context.Context, d string) error {
				var o ai.GenerateOption
				var answers []*ai.Part
				for _, p := range parts {
					if d == "approve" {
						answers = append(answers, s.del.Restart(p, &ai.RestartOptions{ResumedMetadata: map[string]any{"decision": d}}))
					} else {
						answers = append(answers, s.del.Respond(p, "rejected by the user", nil))
					}
				}
				if d == "approve" {
					o = ai.WithToolRestarts(answers...)
				} else {
					o = ai.WithToolResponses(answers...)
				}
				var e error
				res, e = s.generate(ctx, ai.WithMessages(prev.History()...), o)
				if e == nil && c.Replay {
					// the worker crashed before it saved the new history: the
					// saved history and the same restart are sent again
					env.Note("crash before the new history was saved; resuming the saved history again")
					_, e = s.generate(ctx, ai.WithMessages(prev.History()...), o)
				}
				return e
			})
		}
		return err
	}
}

func stopRun(how, body string, control bool) func(context.Context, harness.Env) error {
	return func(ctx context.Context, env harness.Env) error {
		s := newSetup(env, [][]string{{"send_email"}}, body)
		return harness.StopDrive(ctx, env, how, control, func(ctx context.Context) error {
			_, err := s.generate(ctx, ai.WithPrompt("write it"))
			return err
		})
	}
}

// Interrupts is the probe set of tool interrupts with parallel tool requests.
func Interrupts() harness.Framework {
	return harness.Framework{
		Name: "Genkit for Go", Module: "github.com/firebase/genkit/go", ID: "genkit_interrupts",
		Primitive: "tool interrupts (ToolContext.Interrupt) with parallel tool requests",
		Probes: append(harness.ApprovalProbes(harness.ApprovalWords{
			Parallel: "one model turn requests delete_file (interrupts) and send_email in parallel",
			Sequence: "delete_file in one turn, send_email in the next",
			Resume:   "resume with the history and a restart",
			Reject:   "respond with a rejection, at which the scripted model stops",
			Replay:   "the saved history and the restart are sent a second time (a crash before the new history was saved)",
		}, approvalRun), harness.StopProbes(harness.StopWords{Context: "generate context", Body: "tool", Run: "generate"}, stopRun)...),
	}
}
