package main

import (
	"context"
	"fmt"
	"os"
	"strings"
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

func pendingMain(args []string) int {
	cf := newCall("pending", pendingUsage, "Lists the pending approvals the token may decide (its runs), oldest first, one a line:\n"+
		"RUN KEY age=DURATION [digest=ARGS_DIGEST] [DESCRIPTION]. Ids and descriptions are\n"+
		"escaped (docs/protocol.md, \"Methods\"); --json prints the protocol's own JSON, a line per page.\n"+
		"Needs an approver or operator token.")
	limit := cf.fs.Int("limit", 0, fmt.Sprintf("approvals per page (1..%d; 0: the gate's default, %d)", proto.PendingLimitMax, proto.PendingLimitDefault))
	cursor := cf.fs.String("cursor", "", "begin after this place: the cursor a page before gave")
	all := cf.fs.Bool("all", false, "follow the pages to the end of the inbox")
	if _, code := cf.parse(args, 0); code >= 0 {
		return code
	}
	if *limit < 0 || *limit > proto.PendingLimitMax {
		return fail(exitUsage, "--limit is 0..%d, not %d", proto.PendingLimitMax, *limit)
	}
	return cf.do(func(ctx context.Context, c *client.Client) (proto.Result, int, error) {
		o := client.PendingOptions{Limit: *limit, Cursor: *cursor}
		listed := 0
		for pages := 1; ; pages++ {
			r, err := c.Pending(ctx, o)
			if err != nil {
				return nil, 0, err
			}
			listed += len(r.Approvals)
			if !*cf.json {
				for i := range r.Approvals {
					fmt.Print(pendingLine(&r.Approvals[i]))
				}
			}
			if !r.More || !*all || pages == pendingPagesMax {
				if !*cf.json && listed == 0 {
					fmt.Println("no approvals pending")
				}
				if r.More && !*cf.json {
					fmt.Fprintf(os.Stderr, "soundgate: more approvals follow: --cursor %s, or --all\n", r.Cursor)
				}
				return &r, exitOK, nil
			}
			if *cf.json {
				fmt.Println(string(r.AppendJSON(nil)))
			}
			o.Cursor = r.Cursor
		}
	})
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
	if a.ArgsDigest != "" {
		b.WriteString(" digest=" + a.ArgsDigest) // its format has no character to escape
	}
	if a.Description != "" {
		b.WriteString(" " + shownText(a.Description))
	}
	b.WriteByte('\n')
	return b.String()
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
