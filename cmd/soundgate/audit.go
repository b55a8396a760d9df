package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/soundgate/soundgate/impl/audit"
)

func init() {
	register(&command{name: "audit", summary: "print the audit trail: decisions, cancels, fences, timeouts (reads the data directory)",
		usage: auditUsage, run: auditMain})
}

const auditUsage = "soundgate audit [flags] [RUN]"

func auditMain(args []string) int {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	data := fs.String("data", "soundgate-data", "the gate's data directory (serve's --data)")
	asJSON := fs.Bool("json", false, "print the trail's own JSON lines")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", auditUsage,
			"Prints the gate's audit trail ("+audit.FileName+" in its data directory), oldest first: every\n"+
				"decision, cancel, fence and timeout, with when (UTC), who (the token's name) and why, one a line:\n"+
				"TIME ACTION RUN[/KEY] by=NAME [closed=KEYS] [reason=TEXT] [DESCRIPTION]. With RUN, that run's only.\n"+
				"Ids and texts are escaped as the other commands escape them; --json prints the file's lines.\n"+
				"It reads the file, so it needs read access to the data directory, and works while the gate\n"+
				"serves or is stopped. docs/audit.md says what is recorded and how it survives a crash.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return exitUsage
	}
	run := fs.Arg(0)
	path := filepath.Join(*data, audit.FileName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fail(exitFailure, "no audit trail at %s: is --data the gate's data directory? (a gate in memory keeps none)", path)
	}
	n := 0
	err := audit.Read(path, run, func(e audit.Entry) error {
		n++
		if *asJSON {
			b, _ := json.Marshal(e)
			_, err := fmt.Printf("%s\n", b)
			return err
		}
		_, err := io.WriteString(os.Stdout, auditLine(&e))
		return err
	})
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	if n == 0 && !*asJSON {
		if run != "" {
			fmt.Printf("no entries for run %s\n", shown(run))
		} else {
			fmt.Println("no entries")
		}
	}
	return exitOK
}

// auditLine is one entry as audit prints it for people.
func auditLine(e *audit.Entry) string {
	var b strings.Builder
	at := time.UnixMilli(e.AtMs).UTC().Format("2006-01-02T15:04:05.000Z")
	fmt.Fprintf(&b, "%s %s %s", at, e.Action, shown(e.Run))
	if e.Key != "" {
		b.WriteString("/" + shown(e.Key))
	}
	by := "gate" // a timeout: the gate's clock
	if e.By != "" {
		by = shown(e.By)
	}
	b.WriteString(" by=" + by)
	if len(e.Closed) > 0 {
		keys := make([]string, len(e.Closed))
		for i, k := range e.Closed {
			keys[i] = shown(k)
		}
		b.WriteString(" closed=" + strings.Join(keys, ","))
	}
	if e.Reason != "" {
		b.WriteString(" reason=" + shownText(e.Reason))
	}
	if e.Description != "" {
		b.WriteString(" " + shownText(e.Description))
	}
	b.WriteByte('\n')
	return b.String()
}
