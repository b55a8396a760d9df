package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func init() {
	register(&command{name: "version", summary: "print the version", usage: "soundgate version",
		run: func([]string) int { fmt.Printf("soundgate %s (protocol %d)\n", version, proto.Version); return exitOK }})
	register(&command{name: "open", summary: "open a run (operator)", usage: "soundgate open [flags] RUN", run: openMain})
	register(&command{name: "admit", summary: "ask to perform an effect now (agent)", usage: "soundgate admit [flags] RUN KEY", run: admitMain})
	register(&command{name: "decide", summary: "approve or reject a pending approval (approver)", usage: "soundgate decide [flags] RUN KEY approve|reject", run: decideMain})
	register(&command{name: "complete", summary: "record the outcome of an admitted effect (agent)", usage: "soundgate complete [flags] RUN KEY ok|failed", run: completeMain})
	register(&command{name: "status", summary: "show a run and one of its effects", usage: "soundgate status [flags] RUN [KEY]", run: statusMain})
	for _, rc := range runCalls {
		register(&command{name: rc.name, summary: rc.summary, usage: rc.usage(), run: rc.main})
	}
}

// runCall is an operator command whose only operand is RUN and that has no flags of
// its own: its call returns the gate's answer and the line that shows it to people.
type runCall struct {
	name, summary, about string
	call                 func(ctx context.Context, c *client.Client, run string, o client.RunOptions) (res proto.Result, line string, err error)
}

var runCalls = []runCall{
	{name: "cancel", summary: "cancel a run (operator)", about: "Cancels RUN: nothing of it is admitted again. Needs an operator token.",
		call: func(ctx context.Context, c *client.Client, run string, o client.RunOptions) (proto.Result, string, error) {
			r, err := c.CancelWith(ctx, run, o)
			return &r, fmt.Sprintf("run %s %s epoch=%d\n", shown(string(r.Run)), r.Status, r.Epoch), err
		}},
	{name: "fence", summary: "move a run to a new epoch (operator)", about: "Moves RUN to a new epoch: older attempts are fenced. Needs an operator token.",
		call: func(ctx context.Context, c *client.Client, run string, o client.RunOptions) (proto.Result, string, error) {
			r, err := c.FenceWith(ctx, run, o)
			return &r, fmt.Sprintf("run %s epoch=%d\n", shown(string(r.Run)), r.Epoch), err
		}},
}

func (rc runCall) usage() string { return "soundgate " + rc.name + " [flags] RUN" }

func (rc runCall) main(args []string) int {
	cf := newCall(rc.name, rc.usage(), rc.about)
	reason := cf.fs.String("reason", "", "why, kept in the gate's audit trail (soundgate audit; at most 512 bytes)")
	return cf.runOnly(args, func(ctx context.Context, c *client.Client, run string) (proto.Result, int, error) {
		r, line, err := rc.call(ctx, c, run, client.RunOptions{Reason: *reason})
		cf.show(err, "%s", line)
		return r, exitOK, err
	})
}

// callFlags are the flags every client command shares.
type callFlags struct {
	fs        *flag.FlagSet
	addr      *string
	token     *string
	tokenFile *string
	timeout   *time.Duration
	json      *bool
}

func newCall(name, usage, about string) *callFlags {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cf := &callFlags{fs: fs}
	addr := os.Getenv("SOUNDGATE_ADDR")
	if addr == "" {
		addr = "127.0.0.1:7433"
	}
	cf.addr = fs.String("addr", addr, "gate address: host:port, or unix:/path (env SOUNDGATE_ADDR)")
	cf.token = fs.String("token", "", "credential (env SOUNDGATE_TOKEN); other local users see it in ps: prefer --token-file")
	cf.tokenFile = fs.String("token-file", "", "file holding the credential (env SOUNDGATE_TOKEN_FILE)")
	cf.timeout = fs.Duration("timeout", 10*time.Second, "give up after this long (the request's outcome is then unknown)")
	cf.json = fs.Bool("json", false, "print the gate's answer as JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nExit codes: 0 done (admit: perform the effect), 1 failure, 2 usage (and -h),\n3 held, 4 denied, 5 refused by the gate (typed error), 6 duplicate (already admitted).\n\nFlags:\n", usage, about)
		fs.PrintDefaults()
	}
	return cf
}

func (cf *callFlags) parse(args []string, nargs ...int) ([]string, int) {
	if err := cf.fs.Parse(args); err != nil {
		// -h too exits with the usage code: for admit, exit 0 means "perform the effect".
		return nil, exitUsage
	}
	for _, n := range nargs {
		if cf.fs.NArg() == n {
			return cf.fs.Args(), -1
		}
	}
	cf.fs.Usage()
	return nil, exitUsage
}

// do dials, runs f and reports its error with the right exit code.
func (cf *callFlags) do(f func(ctx context.Context, c *client.Client) (proto.Result, int, error)) int {
	token, err := credential(*cf.token, *cf.tokenFile)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *cf.timeout)
	defer cancel()
	c, err := client.Dial(ctx, *cf.addr, token)
	if err != nil {
		return callError(err)
	}
	defer c.Close()
	res, code, err := f(ctx, c)
	if err != nil {
		return callError(err)
	}
	if *cf.json {
		fmt.Println(string(res.AppendJSON(nil))) // the protocol's own JSON (docs/protocol.md)
	}
	return code
}

// credential is the token of a command that dials the gate (client.Token), or why
// there is none.
func credential(token, file string) (string, error) {
	t, err := client.Token(token, file, "SOUNDGATE_TOKEN")
	if err == nil && t == "" {
		err = errors.New("no credential: give --token-file or --token, or set SOUNDGATE_TOKEN_FILE or SOUNDGATE_TOKEN")
	}
	return t, err
}

// runOnly runs call for a command whose only operand is RUN.
func (cf *callFlags) runOnly(args []string, call func(ctx context.Context, c *client.Client, run string) (proto.Result, int, error)) int {
	a, code := cf.parse(args, 1)
	if code >= 0 {
		return code
	}
	return cf.do(func(ctx context.Context, c *client.Client) (proto.Result, int, error) { return call(ctx, c, a[0]) })
}

// keyCall runs call for a command of operands RUN KEY WORD. WORD is read by parse; one
// it does not know is a usage error that begins with words ("the outcome is ok or failed").
func keyCall[W any](cf *callFlags, args []string, parse func(string) (W, bool), words string,
	call func(ctx context.Context, c *client.Client, run, key string, w W) (proto.Result, int, error)) int {
	a, code := cf.parse(args, 3)
	if code >= 0 {
		return code
	}
	w, ok := parse(a[2])
	if !ok {
		return fail(exitUsage, "%s, not %q", words, a[2])
	}
	return cf.do(func(ctx context.Context, c *client.Client) (proto.Result, int, error) {
		return call(ctx, c, a[0], a[1], w)
	})
}

// show prints a call's answer for people (not with --json), once the call succeeded.
func (cf *callFlags) show(err error, format string, a ...any) {
	if err == nil && !*cf.json {
		fmt.Printf(format, a...)
	}
}

func callError(err error) int {
	var ge *client.Error
	if errors.As(err, &ge) {
		msg := ge.Object.Message
		if !strings.HasPrefix(msg, ge.Object.Type) {
			msg = ge.Object.Type + ": " + msg
		}
		return fail(exitRefused, "refused: %s", proto.ShownText(msg))
	}
	// A refusal of the connection itself (overloaded, shutting down), which the gate
	// sends before it closes: refused too, not a failure.
	var pe *proto.Error
	if errors.As(err, &pe) {
		return fail(exitRefused, "refused: %s", pe.Type)
	}
	return fail(exitFailure, "%v", err)
}

func openMain(args []string) int {
	cf := newCall("open", "soundgate open [flags] RUN", "Opens RUN, active at epoch 1. Idempotent. Needs an operator token.")
	deadline := cf.fs.Duration("deadline", 0, "time the run out after this long (0: never)")
	return cf.runOnly(args, func(ctx context.Context, c *client.Client, run string) (proto.Result, int, error) {
		r, err := c.Open(ctx, run, *deadline)
		cf.show(err, "run %s %s epoch=%d created=%t\n", shown(string(r.Run)), r.Status, r.Epoch, r.Created)
		return &r, exitOK, err
	})
}

func admitMain(args []string) int {
	cf := newCall("admit", "soundgate admit [flags] RUN KEY", "Asks to perform effect KEY of RUN now. Perform the effect only on exit code 0.")
	epoch := cf.fs.Uint64("epoch", 1, "the epoch the caller works at")
	gated := cf.fs.Bool("gated", false, "the effect needs its own approval")
	wait := cf.fs.Duration("wait", 0, "wait this long for a decision instead of answering held at once")
	description := cf.fs.String("description", "", "what the effect would do, for the approver (kept with the approval a gated admit opens; at most 512 bytes)")
	digest := cf.fs.String("args-digest", "", `a digest of the effect's arguments, "sha256:" and 64 lower-case hex digits`)
	a, code := cf.parse(args, 2)
	if code >= 0 {
		return code
	}
	if *cf.timeout < *wait+time.Second {
		*cf.timeout = *wait + time.Second
	}
	return cf.do(func(ctx context.Context, c *client.Client) (proto.Result, int, error) {
		r, err := c.Admit(ctx, a[0], a[1], *epoch, client.AdmitOptions{Gated: *gated, Wait: *wait, Description: *description, ArgsDigest: *digest})
		if err != nil {
			return nil, 0, err
		}
		if !*cf.json {
			line := r.Answer.String()
			if r.Reason != core.ReasonNone {
				line += " (" + r.Reason.String() + ")"
			}
			if r.Outcome != core.OutcomeNone {
				line += " outcome=" + r.Outcome.String() + " result=" + strconv.Quote(r.Result)
			}
			fmt.Printf("%s epoch=%d\n", line, r.Epoch)
		}
		switch r.Answer {
		case core.AnswerAdmit:
			return &r, exitOK, nil
		case core.AnswerHeld:
			return &r, exitHeld, nil
		case core.AnswerDuplicate:
			return &r, exitDup, nil
		}
		return &r, exitDenied, nil
	})
}

func decideMain(args []string) int {
	cf := newCall("decide", "soundgate decide [flags] RUN KEY approve|reject", "Decides KEY's pending approval. Needs an approver token.")
	reason := cf.fs.String("reason", "", "why, kept with the effect (status shows it; at most 512 bytes)")
	return keyCall(cf, args, core.ParseDecision, "the decision is approve or reject",
		func(ctx context.Context, c *client.Client, run, key string, d core.Decision) (proto.Result, int, error) {
			r, err := c.DecideWith(ctx, run, key, d, client.DecideOptions{Reason: *reason})
			cf.show(err, "decided %s repeat=%t\n", r.Decision, r.Repeat)
			return &r, exitOK, err
		})
}

func completeMain(args []string) int {
	cf := newCall("complete", "soundgate complete [flags] RUN KEY ok|failed", "Records the outcome of admitted effect KEY, returned to replays.")
	result := cf.fs.String("result", "", "the effect's result (returned with duplicate)")
	return keyCall(cf, args, core.ParseOutcome, "the outcome is ok or failed",
		func(ctx context.Context, c *client.Client, run, key string, o core.Outcome) (proto.Result, int, error) {
			r, err := c.Complete(ctx, run, key, o, *result)
			cf.show(err, "completed repeat=%t\n", r.Repeat)
			return &r, exitOK, err
		})
}

func statusMain(args []string) int {
	cf := newCall("status", "soundgate status [flags] RUN [KEY]", "Shows RUN (status, epoch, pending approvals) and effect KEY (with what its approval says).")
	a, code := cf.parse(args, 1, 2)
	if code >= 0 {
		return code
	}
	key := ""
	if len(a) == 2 {
		key = a[1]
	}
	return cf.do(func(ctx context.Context, c *client.Client) (proto.Result, int, error) {
		r, err := c.Status(ctx, a[0], key)
		if err == nil && !*cf.json {
			pending := make([]string, len(r.Pending))
			for i, k := range r.Pending {
				pending[i] = shown(string(k))
			}
			fmt.Printf("run %s %s epoch=%d pending=[%s]", shown(string(r.Run)), r.Status, r.Epoch, strings.Join(pending, " "))
			if r.DeadlineMs != 0 {
				fmt.Printf(" deadline=%s", time.UnixMilli(int64(r.DeadlineMs)).UTC().Format(time.RFC3339Nano))
			}
			fmt.Println()
			if e := r.Effect; e != nil {
				fmt.Printf("effect %s %s", shown(string(e.Key)), e.Status)
				if e.Gated {
					fmt.Print(" gated")
				}
				if e.Approved {
					fmt.Print(" approved")
				}
				if e.Outcome != core.OutcomeNone {
					fmt.Printf(" outcome=%s result=%q", e.Outcome, e.Result)
				}
				fmt.Println()
				// the note's texts, each on a line of its own, escaped: none can forge a line
				for _, t := range [...][2]string{{"description", e.Description}, {"args_digest", e.ArgsDigest}, {"reason", e.Reason}} {
					if t[1] != "" {
						fmt.Printf("%s: %s\n", t[0], shownText(t[1]))
					}
				}
			}
		}
		return &r, exitOK, err
	})
}
