package harness

import (
	"context"
	"errors"
	"fmt"
)

// StopDrive runs invoke under a cancellable or deadline context and records
// the stop; it then watches for late effects for SettleDuration.
func StopDrive(ctx context.Context, env Env, how string, control bool, invoke func(context.Context) error) error {
	var runCtx context.Context
	var cancel context.CancelFunc
	if how == "timeout" && !control {
		runCtx, cancel = context.WithTimeout(ctx, StopAfterDuration)
	} else {
		runCtx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- invoke(runCtx) }()
	report := func(err error) {
		if err != nil {
			env.Note("invoke returned error: " + shortErr(err))
		} else {
			env.Note("invoke returned")
		}
	}
	switch {
	case control:
		report(<-done)
		env.Stopped(ctx, how, cancel)
	case how == "cancel":
		_ = Sleep(ctx, StopAfterDuration)
		env.Stopped(ctx, "cancel", cancel)
		report(<-done)
	default:
		<-runCtx.Done()
		env.Stopped(ctx, "timeout", nil)
		report(<-done)
	}
	_ = Sleep(ctx, SettleDuration)
	return nil
}

func shortErr(err error) string {
	switch {
	case errors.Is(err, context.Canceled):
		return "context canceled"
	case errors.Is(err, context.DeadlineExceeded):
		return "context deadline exceeded"
	}
	s := err.Error()
	if len(s) > 120 {
		s = s[:120]
	}
	return s
}

// StopRun builds the run of a B4 probe: how is "cancel" or "timeout", body
// the kind of tool body (see Body), and control stops the run only after it
// completed.
type StopRun func(how, body string, control bool) func(context.Context, Env) error

// StopWords name, in a probe's About, what a framework's B4 probes stop.
type StopWords struct {
	Context string // the context that is cancelled or passes its deadline, e.g. "run context"
	Body    string // what runs when it is stopped: "tool", "node"
	Run     string // what completes before the control's stop: "run", "generate"
}

// StopProbes are the B4 probes of a framework: cancel, then timeout, each with
// a cooperative and an uncooperative body, and the control.
func StopProbes(w StopWords, run StopRun) []Probe {
	var ps []Probe
	for _, stop := range []struct{ how, what string }{{"cancel", "cancelled"}, {"timeout", "deadline passes"}} {
		for _, body := range []struct{ kind, does string }{{"cooperative", "observes"}, {"uncooperative", "ignores"}} {
			ps = append(ps, Probe{Property: "B4", Case: stop.how + "/" + body.kind,
				About: fmt.Sprintf("%s %s while the %s body runs; body %s ctx", w.Context, stop.what, w.Body, body.does),
				Run:   run(stop.how, body.kind, false)})
		}
	}
	return append(ps, Probe{Property: "B4", Case: "control", About: w.Run + " completes, then the context is cancelled",
		Run: run("cancel", "uncooperative", true)})
}
