// Command soundgate is the effect gate: its server, and the commands that talk to it.
//
// Each subcommand lives in its own file and registers itself with register, so that
// the command table is the list of files in this folder.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strings"
)

// Exit codes shared by every subcommand, so that shell scripts can branch on them.
const (
	exitOK      = 0 // done; for admit: the answer was admit (perform the effect)
	exitFailure = 1 // the operation failed (connection, server error)
	exitUsage   = 2 // bad flags or arguments
	exitHeld    = 3 // admit answered held
	exitDenied  = 4 // admit answered denied (the reason is printed)
	exitRefused = 5 // the gate refused the request with a typed error (printed)
	exitDup     = 6 // admit answered duplicate: the effect was already admitted, do not redo it
)

// command is one subcommand of soundgate.
type command struct {
	name    string
	summary string                  // one line, for the command list
	usage   string                  // the synopsis, e.g. "soundgate admit [flags] RUN KEY"
	run     func(args []string) int // returns the process exit code
}

var commands = map[string]*command{}

// register adds c to the command table; called from init functions.
func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("soundgate: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

func usage(w io.Writer) {
	fmt.Fprintf(w, "soundgate: an effect gate for agent runs (hold-until-decided, reject-cancels,\ndedup-on-replay, fence-on-cancel).\n\nUsage: soundgate COMMAND [flags] [args]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun 'soundgate COMMAND -h' for a command's flags.\n")
	fmt.Fprintf(w, "Set %s=FILE to write a CPU profile of the command (go tool pprof FILE).\n", cpuProfileEnv)
}

func main() {
	os.Exit(dispatch(os.Args[1:]))
}

func dispatch(args []string) int {
	if len(args) == 0 {
		usage(os.Stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run([]string{"-h"})
			}
		}
		usage(os.Stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "soundgate: unknown command %q\n\n", args[0])
		usage(os.Stderr)
		return exitUsage
	}
	if path := os.Getenv(cpuProfileEnv); path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			return fail(exitFailure, "%s: %v", cpuProfileEnv, err)
		}
		defer stop()
	}
	return c.run(args[1:])
}

// cpuProfileEnv names a file that receives a CPU profile of the whole command (go tool
// pprof reads it): how docs/verify/wal.md finds where a benchmark's CPU goes, in the
// gate and in the load generator, without a second build.
const cpuProfileEnv = "SOUNDGATE_CPUPROFILE"

func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// fail prints a one-line error in the common format and returns code.
func fail(code int, format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "soundgate: %s\n", strings.TrimSpace(fmt.Sprintf(format, a...)))
	return code
}
