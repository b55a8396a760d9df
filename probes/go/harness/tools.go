package harness

import (
	"context"
	"time"
)

// Sleep waits d or until ctx is done; it reports whether it was interrupted.
// A cooperative tool body uses it; an uncooperative one uses time.Sleep.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Body runs a B4 tool body of the given kind ("cooperative" observes ctx,
// "uncooperative" ignores it) and reports whether it was interrupted.
func Body(ctx context.Context, kind string) error {
	if kind == "cooperative" {
		return Sleep(ctx, ToolBodyDuration)
	}
	time.Sleep(ToolBodyDuration)
	return nil
}

// SendEmail is the body of the probes' send_email tool. In an approval probe
// (body "") it is the sibling of the gated call: it commits send_email of plan
// after SiblingDelay. In a B4 probe it runs Body(ctx, body) and then commits
// write_file of run S1.
func SendEmail(ctx context.Context, env Env, plan, body string) error {
	key, p := "send_email", plan
	if body == "" {
		_ = Sleep(ctx, SiblingDelay)
	} else {
		key, p = "write_file", "S1"
		if err := Body(ctx, body); err != nil {
			return err
		}
	}
	_, err := env.GatedStep(ctx, key, p, StepOptions{})
	return err
}

// TurnPlan is the plan of a model turn that calls the probes' tools, for
// Env.Plan: delete_file's effect delete is gated, send_email's is not.
func TurnPlan(tools []string) (gated, effects []string) {
	for _, t := range tools {
		if t == "delete_file" {
			gated = append(gated, "delete")
			effects = append(effects, "delete")
		} else {
			effects = append(effects, "send_email")
		}
	}
	return gated, effects
}
