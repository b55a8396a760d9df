package eino

import (
	"context"
	"fmt"
	"sync"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/components/tool/utils"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"

	"github.com/soundgate/soundgate/probes/go/harness"
)

const plan = "P1"

// memStore is an in-memory compose.CheckPointStore.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memStore) Get(_ context.Context, id string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[id]
	return b, ok, nil
}

func (s *memStore) Set(_ context.Context, id string, b []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = b
	return nil
}

// askApproval is the gated node's approval: it interrupts the first time and
// returns the resume data (the decision) when resumed.
func askApproval(ctx context.Context, ask string) (string, error) {
	was, _, _ := compose.GetInterruptState[any](ctx)
	if !was {
		return "", compose.Interrupt(ctx, ask)
	}
	isResume, hasData, d := compose.GetResumeContext[string](ctx)
	if !isResume || !hasData {
		return "", compose.Interrupt(ctx, ask)
	}
	return d, nil
}

func buildGraph(ctx context.Context, env harness.Env, c harness.Approval, store *memStore) (compose.Runnable[map[string]any, map[string]any], error) {
	g := compose.NewGraph[map[string]any, map[string]any]()
	gated := compose.InvokableLambda(func(ctx context.Context, in map[string]any) (map[string]any, error) {
		if c.Prepare {
			if _, err := env.GatedStep(ctx, "prepare", plan, harness.StepOptions{}); err != nil {
				return nil, err
			}
		}
		d, err := askApproval(ctx, "approve delete /data?")
		if err != nil {
			return nil, err
		}
		if d == "approve" {
			if _, err := env.GatedStep(ctx, "delete", plan, harness.StepOptions{Gated: true}); err != nil {
				return nil, err
			}
		}
		return map[string]any{"decision": d}, nil
	})
	sibling := compose.InvokableLambda(func(ctx context.Context, in map[string]any) (map[string]any, error) {
		// in sequence, the sibling sends nothing for a rejected plan
		if !c.Parallel && in["decision"] != "approve" {
			return map[string]any{"sibling": "skipped"}, nil
		}
		_ = harness.Sleep(ctx, harness.SiblingDelay)
		if _, err := env.GatedStep(ctx, "send_email", plan, harness.StepOptions{}); err != nil {
			return nil, err
		}
		return map[string]any{"sibling": "sent"}, nil
	})
	// plan decides what the next step does; the mediated adapter registers
	// the plan with the gate here.
	effects := []string{"delete", "send_email"}
	if c.Prepare {
		effects = append([]string{"prepare"}, effects...)
	}
	planNode := compose.InvokableLambda(func(ctx context.Context, in map[string]any) (map[string]any, error) {
		return in, env.Plan(ctx, plan, []string{"delete"}, effects)
	})
	for _, err := range []error{g.AddLambdaNode("plan", planNode), g.AddLambdaNode("gated", gated), g.AddLambdaNode("sibling", sibling)} {
		if err != nil {
			return nil, err
		}
	}
	var edges [][2]string
	if c.Parallel {
		edges = [][2]string{{compose.START, "plan"}, {"plan", "gated"}, {"plan", "sibling"}, {"gated", compose.END}, {"sibling", compose.END}}
	} else {
		edges = [][2]string{{compose.START, "plan"}, {"plan", "gated"}, {"gated", "sibling"}, {"sibling", compose.END}}
	}
	for _, e := range edges {
		if err := g.AddEdge(e[0], e[1]); err != nil {
			return nil, err
		}
	}
	return g.Compile(ctx, compose.WithCheckPointStore(store))
}

// resumeLoop invokes run, and while it ends in an interrupt, records the
// pause, takes the decision and resumes every interrupt point with it.
func resumeLoop(ctx context.Context, env harness.Env, decision string, invoke func(ctx context.Context) error) error {
	err := invoke(ctx)
	for round := 0; err != nil && round < 8; round++ {
		info, ok := compose.ExtractInterruptInfo(err)
		if !ok {
			return err
		}
		var ids, asks []string
		for _, ic := range info.InterruptContexts {
			if ic.IsRootCause {
				ids = append(ids, ic.ID)
				asks = append(asks, fmt.Sprint(ic.Info))
			}
		}
		err = env.Paused(ctx, plan, asks, decision, func(ctx context.Context, d string) error {
			data := map[string]any{}
			for _, id := range ids {
				data[id] = d
			}
			return invoke(compose.BatchResumeWithData(ctx, data))
		})
	}
	return err
}

func graphRun(c harness.Approval) func(context.Context, harness.Env) error {
	return func(ctx context.Context, env harness.Env) error {
		store := &memStore{m: map[string][]byte{}}
		r, err := buildGraph(ctx, env, c, store)
		if err != nil {
			return err
		}
		return resumeLoop(ctx, env, c.Decision, crashReplay(env, store, "t1", c.Replay, func(ctx context.Context) error {
			_, err := r.Invoke(ctx, map[string]any{}, compose.WithCheckPointID("t1"))
			return err
		}))
	}
}

// crashReplay wraps invoke, one run of checkpoint id. With replay, the worker
// crashes after the first resume, before its new checkpoint is durable, so the
// checkpoint saved at the pause is resumed a second time.
func crashReplay(env harness.Env, store *memStore, id string, replay bool, invoke func(context.Context) error) func(context.Context) error {
	var saved []byte
	calls := 0
	return func(ctx context.Context) error {
		calls++
		if calls == 2 { // the first resume: keep the checkpoint of the pause
			saved, _, _ = store.Get(ctx, id)
		}
		err := invoke(ctx)
		if err == nil && replay && calls == 2 && saved != nil {
			env.Note("crash before the new checkpoint was saved; resuming the saved checkpoint again")
			_ = store.Set(ctx, id, saved)
			err = invoke(ctx)
		}
		return err
	}
}

// stopRun runs a one-node graph whose body takes ToolBodyDuration, and
// cancels it (context cancel) or times it out (context deadline).
func stopRun(how, body string, control bool) func(context.Context, harness.Env) error {
	return func(ctx context.Context, env harness.Env) error {
		g := compose.NewGraph[map[string]any, map[string]any]()
		_ = g.AddLambdaNode("work", compose.InvokableLambda(func(ctx context.Context, in map[string]any) (map[string]any, error) {
			if err := harness.Body(ctx, body); err != nil {
				return nil, err
			}
			_, err := env.GatedStep(ctx, "write_file", "S1", harness.StepOptions{})
			return map[string]any{"work": "done"}, err
		}))
		_ = g.AddEdge(compose.START, "work")
		_ = g.AddEdge("work", compose.END)
		r, err := g.Compile(ctx)
		if err != nil {
			return err
		}
		return harness.StopDrive(ctx, env, how, control, func(ctx context.Context) error {
			_, err := r.Invoke(ctx, map[string]any{})
			return err
		})
	}
}

type deleteArgs struct {
	Path string `json:"path"`
}
type sendArgs struct {
	To string `json:"to"`
}

func tools(env harness.Env, body string) ([]tool.BaseTool, error) {
	del, err := utils.InferTool("delete_file", "delete a file (needs approval)", func(ctx context.Context, a deleteArgs) (string, error) {
		d, err := askApproval(ctx, "approve delete "+a.Path+"?")
		if err != nil {
			return "", err
		}
		if d != "approve" {
			return "rejected by the user", nil
		}
		_, err = env.GatedStep(ctx, "delete", plan, harness.StepOptions{Gated: true})
		return "deleted", err
	})
	if err != nil {
		return nil, err
	}
	send, err := utils.InferTool("send_email", "send an email", func(ctx context.Context, a sendArgs) (string, error) {
		if err := harness.SendEmail(ctx, env, plan, body); err != nil {
			return "", err
		}
		return "sent", nil
	})
	if err != nil {
		return nil, err
	}
	return []tool.BaseTool{del, send}, nil
}

var (
	callDelete = schema.ToolCall{ID: "call_delete", Type: "function", Function: schema.FunctionCall{Name: "delete_file", Arguments: `{"path":"/data"}`}}
	callSend   = schema.ToolCall{ID: "call_send", Type: "function", Function: schema.FunctionCall{Name: "send_email", Arguments: `{"to":"ops@example.org"}`}}
)

func toolGraph(ctx context.Context, env harness.Env, body string, store *memStore) (compose.Runnable[*schema.Message, []*schema.Message], error) {
	ts, err := tools(env, body)
	if err != nil {
		return nil, err
	}
	tn, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: ts})
	if err != nil {
		return nil, err
	}
	g := compose.NewGraph[*schema.Message, []*schema.Message]()
	if err := g.AddToolsNode("tools", tn); err != nil {
		return nil, err
	}
	_ = g.AddEdge(compose.START, "tools")
	_ = g.AddEdge("tools", compose.END)
	return g.Compile(ctx, compose.WithCheckPointStore(store))
}

// toolRun feeds the scripted model's turns to a ToolsNode graph, one turn
// per run; a turn after a rejected one is not issued (the scripted model stops).
func toolRun(c harness.Approval) func(context.Context, harness.Env) error {
	turns := [][]schema.ToolCall{{callDelete}, {callSend}}
	if c.Parallel {
		turns = [][]schema.ToolCall{{callDelete, callSend}}
	}
	return func(ctx context.Context, env harness.Env) error {
		store := &memStore{m: map[string][]byte{}}
		r, err := toolGraph(ctx, env, "", store)
		if err != nil {
			return err
		}
		for i, calls := range turns {
			var out []*schema.Message
			id := fmt.Sprintf("t1-turn%d", i)
			if err := planTurn(ctx, env, calls); err != nil {
				return err
			}
			err := resumeLoop(ctx, env, c.Decision, crashReplay(env, store, id, c.Replay, func(ctx context.Context) error {
				var err error
				out, err = r.Invoke(ctx, schema.AssistantMessage("", calls), compose.WithCheckPointID(id))
				return err
			}))
			if err != nil {
				return err
			}
			for _, m := range out {
				if m.Content == "rejected by the user" {
					return nil
				}
			}
		}
		return nil
	}
}

// planTurn is the plan hook of a model turn: the turn's calls are announced
// to the gate before the ToolsNode runs them.
func planTurn(ctx context.Context, env harness.Env, calls []schema.ToolCall) error {
	var names []string
	for _, c := range calls {
		names = append(names, c.Function.Name)
	}
	gated, effects := harness.TurnPlan(names)
	return env.Plan(ctx, plan, gated, effects)
}

func toolStopRun(how, body string, control bool) func(context.Context, harness.Env) error {
	return func(ctx context.Context, env harness.Env) error {
		r, err := toolGraph(ctx, env, body, &memStore{m: map[string][]byte{}})
		if err != nil {
			return err
		}
		return harness.StopDrive(ctx, env, how, control, func(ctx context.Context) error {
			_, err := r.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{callSend}), compose.WithCheckPointID("t1"))
			return err
		})
	}
}

// Graph is the probe set of compose.Interrupt with parallel nodes.
func Graph() harness.Framework {
	return harness.Framework{
		Name: "Eino", Module: "github.com/cloudwego/eino", ID: "eino_interrupt",
		Primitive: "compose.Interrupt + checkpoint resume, parallel nodes in one step",
		Probes: append(harness.ApprovalProbes(harness.ApprovalWords{
			Parallel: "gated node interrupts while a sibling node runs in the same step",
			Sequence: "same nodes in sequence (nothing commits before the interrupt), the sibling skips on reject",
			Resume:   "resume from the checkpoint",
			Prepare:  "the gated node commits 'prepare' before interrupting",
			Replay:   "the checkpoint saved at the pause is resumed a second time (a crash before the new one was saved)",
		}, graphRun), harness.StopProbes(harness.StopWords{Context: "context", Body: "node", Run: "run"}, stopRun)...),
	}
}

// ToolsNode is the probe set of the ToolsNode with parallel tool calls.
func ToolsNode() harness.Framework {
	return harness.Framework{
		Name: "Eino", Module: "github.com/cloudwego/eino", ID: "eino_toolsnode",
		Primitive: "ToolsNode, parallel tool calls, compose.Interrupt in a tool",
		Probes: append(harness.ApprovalProbes(harness.ApprovalWords{
			Parallel: "one message calls delete_file (interrupts) and send_email in parallel",
			Sequence: "delete_file in one turn, send_email in the next",
			Resume:   "the ToolsNode resumes from the checkpoint",
			Reject:   "the scripted model stops at the rejection",
			NoReplay: "resuming the restored checkpoint a second time panics inside Eino v0.7.36 (nil pointer in ToolsNode.genToolCallTasks)",
		}, toolRun), harness.StopProbes(harness.StopWords{Context: "context", Body: "tool", Run: "run"}, toolStopRun)...),
	}
}
