// Command scenariogate serves a real gate whose clock a test drives, so that the
// contract's scenario files (testdata/scenarios) run unchanged through a client in
// another language: the client sends every request over the socket, and asks this
// program, on its standard input, for what no request can do (set the clock, take
// the timeouts due, retire a run). It is a test fixture, never installed: the clock
// it exposes would let anyone move a real gate's deadlines.
//
// It prints one JSON line {"unix":PATH,"tcp":ADDR} once it listens, then answers each
// line of its standard input, one JSON object of
//
//	{"cmd":"clock","now":MS} | {"cmd":"timeout"} | {"cmd":"retire","run":R,"upto":BOOL}
//
// with one line {"out":TEXT}, TEXT being the scenario's expected output (as
// internal/scenario renders it), or {"error":TEXT} for a line it cannot read. It stops
// at the end of its input.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/internal/scenario"
)

type control struct {
	Cmd  string `json:"cmd"`
	Now  *int64 `json:"now"`
	Run  string `json:"run"`
	Upto bool   `json:"upto"`
}

func main() {
	if err := serve(); err != nil {
		fmt.Fprintln(os.Stderr, "scenariogate:", err)
		os.Exit(1)
	}
}

func serve() error {
	clock := &servertest.Clock{}
	g, err := servertest.New(servertest.Options{Node: node.Config{Now: clock.Now}, TCP: true})
	if err != nil {
		return err
	}
	defer g.Close()
	out := json.NewEncoder(os.Stdout)
	if err := out.Encode(map[string]string{"unix": g.Unix, "tcp": g.TCP}); err != nil {
		return err
	}
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		var c control
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			if err := out.Encode(map[string]string{"error": err.Error()}); err != nil {
				return err
			}
			continue
		}
		text, err := step(g, clock, c)
		ans := map[string]string{"out": text}
		if err != nil {
			ans = map[string]string{"error": err.Error()}
		}
		if err := out.Encode(ans); err != nil {
			return err
		}
	}
	return in.Err()
}

func step(g *servertest.Gate, clock *servertest.Clock, c control) (string, error) {
	switch c.Cmd {
	case "clock":
		if c.Now == nil {
			return "", fmt.Errorf("clock needs now")
		}
		clock.Set(core.Time(*c.Now))
		return fmt.Sprintf("now=%d\n", *c.Now), nil
	case "timeout":
		return fmt.Sprintf("timed out %v\n", g.Node.TimeoutDue()), nil
	case "retire":
		cmd := core.Command{Op: core.OpRetire, Run: core.RunID(c.Run), Upto: c.Upto, Now: clock.Now()}
		a := g.Node.Apply(node.Request{Cmd: cmd})
		rep := a.Reply
		rep.Err = a.Err
		return scenario.Render(cmd, rep), nil
	}
	return "", fmt.Errorf("unknown cmd %q: want clock, timeout or retire", c.Cmd)
}
