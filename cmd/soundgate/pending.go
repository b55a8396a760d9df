package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/proto"
)

func init() {
	register(&command{name: "pending", summary: "list the approvals waiting for a decision (approver, operator)",
		usage: pendingUsage, run: pendingMain})
}

const pendingUsage = "soundgate pending [flags]"

// pendingPagesMax bounds how many pages --all follows: a gate that kept answering
// "more" would otherwise keep the command going for ever.
const pendingPagesMax = 10000

func pendingMain(args []string) int { return pending(args, interruptible) }

// interruptible is the context of a command that runs until Ctrl-C or SIGTERM.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
}

// pending is the command, with the context --watch runs in until it is interrupted.
func pending(args []string, interrupt func() (context.Context, context.CancelFunc)) int {
	cf := newCall("pending", pendingUsage, "Lists the pending approvals the token may decide (its runs), oldest first, one a line:\n"+
		"RUN KEY age=DURATION [digest=ARGS_DIGEST] [DESCRIPTION]. Ids and descriptions are\n"+
		"escaped (docs/protocol.md, \"Methods\"); --json prints the protocol's own JSON, a line per page.\n"+
		"With --watch, the whole inbox, then one line per change as it happens, until Ctrl-C (exit 0):\n"+
		"TIME EVENT RUN KEY [reason=REASON] [digest=ARGS_DIGEST] [DESCRIPTION], TIME on the gate's\n"+
		"clock (UTC), EVENT pending, approved, rejected, cancelled, fenced or timed_out; a line\n"+
		"\"TIME lost\" says the gate dropped changes, and the inbox is listed again. With --json, the\n"+
		"pages and each notification's params, a line each. A gate that goes away ends it (exit 1).\n"+
		"Needs an approver or operator token.")
	limit := cf.fs.Int("limit", 0, fmt.Sprintf("approvals per page (1..%d; 0: the gate's default, %d)", proto.PendingLimitMax, proto.PendingLimitDefault))
	cursor := cf.fs.String("cursor", "", "begin after this place: the cursor a page before gave")
	all := cf.fs.Bool("all", false, "follow the pages to the end of the inbox")
	watch := cf.fs.Bool("watch", false, "list the whole inbox, then print each change of it as it happens, until Ctrl-C")
	if _, code := cf.parse(args, 0); code >= 0 {
		return code
	}
	if *limit < 0 || *limit > proto.PendingLimitMax {
		return fail(exitUsage, "--limit is 0..%d, not %d", proto.PendingLimitMax, *limit)
	}
	if *watch {
		if *cursor != "" {
			return fail(exitUsage, "--watch lists the whole inbox: no --cursor")
		}
		ctx, stop := interrupt()
		defer stop()
		return watchInbox(ctx, cf, *limit)
	}
	return cf.do(func(ctx context.Context, c *client.Client) (proto.Result, int, error) {
		r, err := listInbox(ctx, c, client.PendingOptions{Limit: *limit, Cursor: *cursor}, *all, *cf.json)
		return &r, exitOK, err
	})
}

// listInbox prints the inbox from o on for people, one approval a line ("no
// approvals pending" if none), following the pages while all (at most
// pendingPagesMax). With asJSON it prints each page's JSON instead, but the last,
// which it returns (cf.do prints an answer's JSON).
func listInbox(ctx context.Context, c *client.Client, o client.PendingOptions, all, asJSON bool) (proto.PendingResult, error) {
	listed := 0
	for pages := 1; ; pages++ {
		r, err := c.Pending(ctx, o)
		if err != nil {
			return r, err
		}
		listed += len(r.Approvals)
		if !asJSON {
			for i := range r.Approvals {
				fmt.Print(pendingLine(&r.Approvals[i]))
			}
		}
		if !r.More || !all || pages == pendingPagesMax {
			if !asJSON && listed == 0 {
				fmt.Println("no approvals pending")
			}
			if r.More && !asJSON {
				fmt.Fprintf(os.Stderr, "soundgate: more approvals follow: --cursor %s, or --all\n", r.Cursor)
			}
			return r, nil
		}
		if asJSON {
			fmt.Println(string(r.AppendJSON(nil)))
		}
		o.Cursor = r.Cursor
	}
}

// watchInbox is pending --watch: it watches first and lists the inbox then, so that
// no change falls between the two, and prints each change until ctx ends (exit 0)
// or the gate goes away (exit 1). Each call but the wait for a change has the
// command's --timeout.
func watchInbox(ctx context.Context, cf *callFlags, limit int) int {
	token, err := credential(*cf.token, *cf.tokenFile)
	if err != nil {
		return fail(exitUsage, "%v", err)
	}
	call := func(f func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(ctx, *cf.timeout)
		defer cancel()
		return f(ctx)
	}
	var c *client.Client
	var w *client.Watch
	list := func(ctx context.Context) error {
		r, err := listInbox(ctx, c, client.PendingOptions{Limit: limit}, true, *cf.json)
		if err == nil && *cf.json {
			fmt.Println(string(r.AppendJSON(nil)))
		}
		return err
	}
	err = call(func(ctx context.Context) (err error) {
		if c, err = client.Dial(ctx, *cf.addr, token); err != nil {
			return err
		}
		if w, err = c.Watch(ctx); err != nil {
			return err
		}
		return list(ctx)
	})
	if c != nil {
		defer c.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return exitOK // interrupted before the watch began
		}
		return callError(err)
	}
	for {
		ev, err := w.Next(ctx)
		switch {
		case ctx.Err() != nil:
			return exitOK
		case err != nil:
			return fail(exitFailure, "the gate went away, the watch ended: %v", err)
		case *cf.json:
			fmt.Println(string(ev.AppendJSON(nil)))
		default:
			fmt.Print(eventLine(&ev))
		}
		if ev.Event == proto.EventLost {
			if err := call(list); err != nil {
				if ctx.Err() != nil {
					return exitOK
				}
				return callError(err)
			}
		}
	}
}

// eventLine is one change of the inbox as pending --watch prints it for people; the
// reason is one word, Go-quoted if it holds a space, so that the description after
// it stays the rest of the line.
func eventLine(ev *proto.InboxEvent) string {
	var b strings.Builder
	if ev.AtMs == 0 {
		b.WriteString("?") // a loss the client saw itself: no time of the gate's
	} else {
		b.WriteString(time.UnixMilli(int64(ev.AtMs)).UTC().Format("2006-01-02T15:04:05.000Z"))
	}
	b.WriteString(" " + shown(ev.Event))
	if ev.Event != proto.EventLost {
		fmt.Fprintf(&b, " %s %s", shown(string(ev.Run)), shown(string(ev.Key)))
	}
	if ev.Reason != "" {
		b.WriteString(" reason=" + shown(ev.Reason))
	}
	writeNote(&b, ev.ArgsDigest, ev.Description)
	return b.String()
}

// pendingLine is one approval as pending prints it for people.
func pendingLine(a *proto.PendingApproval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s age=", shown(string(a.Run)), shown(string(a.Key)))
	if a.SinceMs == 0 {
		b.WriteString("?") // opened before the gate kept the time (an older snapshot)
	} else {
		b.WriteString(humanAge(time.Duration(a.AgeMs) * time.Millisecond))
	}
	writeNote(&b, a.ArgsDigest, a.Description)
	return b.String()
}

// writeNote ends a line of pending with what the approval says: its args digest and
// its description, escaped.
func writeNote(b *strings.Builder, digest, description string) {
	if digest != "" {
		b.WriteString(" digest=" + digest) // its format has no character to escape
	}
	if description != "" {
		b.WriteString(" " + shownText(description))
	}
	b.WriteByte('\n')
}

// humanAge is an age as people read it: 0s, 42s, 5m07s, 3h05m, 2d03h.
func humanAge(d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%02dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%02dh", s/86400, s%86400/3600)
}
