package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// edit replaces old, which must occur exactly once in file, by new; with every set,
// it replaces every occurrence in every non-test Go file of file's directory.
type edit struct {
	file, old, new string
	every          bool
}

// control is a seeded change and the exit status drift must give it.
type control struct {
	name  string
	edits []edit
	fix   bool // run drift -fix after the edits (pins rewritten: only evidence is left)
	args  []string
	want  int
	why   []string // drift's output must say each: the verdict for the right reason
}

// controls are verify-drift's negative (and positive) controls. An edit that no longer
// applies is a failure of the controls, never a skip: the seed must follow the code.
var controls = []control{
	{name: "a guard deleted from the core's Admit", want: 1, why: []string{"conformance FAILED"}, edits: []edit{{file: "impl/core/gate.go",
		old: "\tcase run.Status == RunCancelled:\n\t\treturn res.deny(ReasonCancelled, run), nil\n"}}},
	{name: "the spec's Admit guard weakened alone", want: 1, why: []string{"stale-pin: Gate.admit"}, edits: []edit{{file: "spec/tla/SoundGate.tla",
		old: "  ELSE IF runStatus[r] = \"cancelled\" THEN Denied(\"cancelled\")\n"}}},
	{name: "a spec change with no code change, pins rewritten", want: 1, fix: true, why: []string{"graphs FAILED"}, edits: []edit{{file: "spec/tla/SoundGate.tla",
		old: "Live(s) == s \\in {\"held\", \"released\"}", new: "Live(s) == s \\in {\"held\"}"}}},
	{name: "a directive naming no action", want: 1, why: []string{"names-nothing"}, edits: []edit{{file: "impl/core/gate.go",
		old: "//spec:action Fence pin=", new: "//spec:action Fense pin="}}},
	{name: "a change in the server's wake path that only trace validation sees", want: 1,
		why: []string{"wire passed", "trace FAILED"}, edits: []edit{{file: "impl/node/wait.go",
			old: "if brokenWake && err == nil && rep.Err == nil", new: "if err == nil && rep.Err == nil"}}},
	{name: "a comment-only edit", want: 0, why: []string{"0 actions touched"}, edits: []edit{{file: "impl/core/gate.go",
		old: "\t// k is absent or released.\n", new: "\t// k is absent, or it was released.\n"}}},
	{name: "a renamed helper", want: 0, why: []string{"conformance passed"}, edits: []edit{{file: "impl/core/gate.go", old: ".deny(", new: ".refuse(", every: true},
		{file: "impl/core/gate.go", old: ") deny(", new: ") refuse(", every: true}}},
	{name: "an unannotated edit in impl/, -strict", want: 3, why: []string{"unmapped: changed impl/egress."}, args: []string{"-strict"}, edits: []edit{{file: "impl/egress/proxy.go",
		old: "this proxy serves run %q", new: "this proxy serves only run %q"}}},
	{name: "a refactor of the spec's text, -strict", want: 3, why: []string{"(a refactor)"}, args: []string{"-strict"}, edits: []edit{{file: "spec/tla/SoundGate.tla",
		old: "Live(s) == s \\in {\"held\", \"released\"}", new: "Live(s) == s \\in {\"released\", \"held\"}"}}},
}

// runControls applies each control to a clone of root's HEAD and checks drift's exit
// status on it. It returns the command's exit status: 0 when every verdict is the
// expected one.
func runControls(root string, stdout, stderr io.Writer) int {
	work, err := os.MkdirTemp("", "drift-controls-")
	if err != nil {
		fmt.Fprintf(stderr, "drift: %v\n", err)
		return exitUsage
	}
	defer os.RemoveAll(work)
	clone := filepath.Join(work, "clone")
	bin := filepath.Join(work, "drift")
	if out, err := exec.Command("git", "clone", "--quiet", "--shared", root, clone).CombinedOutput(); err != nil {
		fmt.Fprintf(stderr, "drift: cloning %s: %v: %s\n", root, err, out)
		return exitUsage
	}
	build := exec.Command("go", "build", "-o", bin, "./cmd/drift")
	build.Dir = clone
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(stderr, "drift: building drift: %v: %s\n", err, out)
		return exitUsage
	}
	fmt.Fprintf(stdout, "drift controls: on a clone of %s's HEAD (uncommitted changes are not in it)\n", root)
	good := 0
	var verdicts []string
	for i, c := range controls {
		start := time.Now()
		got, out, err := c.run(clone, bin)
		took := time.Since(start).Round(time.Second)
		status := "as expected"
		switch {
		case err != nil:
			status = "FAILED: " + err.Error()
		case got != c.want:
			status = fmt.Sprintf("FAILED: exit %d, want %d", got, c.want)
		default:
			for _, why := range c.why {
				if !strings.Contains(out, why) {
					status = fmt.Sprintf("FAILED: the output does not say %q", why)
				}
			}
			if status == "as expected" {
				good++
			}
		}
		fmt.Fprintf(stdout, "drift controls: [%d/%d] %s: exit %d (want %d, saying \"%s\") in %v, %s\n", i+1, len(controls), c.name, got, c.want, strings.Join(c.why, `" and "`), took, status)
		if status != "as expected" {
			fmt.Fprintf(stderr, "%s\n", out)
		}
		verdicts = append(verdicts, fmt.Sprintf("%s %d", c.name, got))
	}
	fmt.Fprintf(stdout, "drift controls: %d seeded changes, %d verdicts as expected (%s)\n",
		len(controls), good, strings.Join(verdicts, ", "))
	if good != len(controls) {
		return 1
	}
	return 0
}

// run resets the clone, applies c and returns drift's exit status on it and its output.
func (c control) run(clone, bin string) (int, string, error) {
	reset := exec.Command("sh", "-c", "git checkout --quiet -- . && git clean --quiet -fd")
	reset.Dir = clone
	if out, err := reset.CombinedOutput(); err != nil {
		return -1, "", fmt.Errorf("resetting the clone: %v: %s", err, out)
	}
	for _, e := range c.edits {
		if err := e.apply(clone); err != nil {
			return -1, "", err
		}
	}
	if c.fix {
		fix := exec.Command(bin, "-fix")
		fix.Dir = clone
		fix.Run() // its exit status is the audit's; the pins are what it is for
	}
	cmd := exec.Command(bin, append([]string{"-base", "HEAD"}, c.args...)...)
	cmd.Dir = clone
	cmd.Env = withoutAcks(os.Environ())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), out.String(), nil
	}
	return 0, out.String(), err
}

func withoutAcks(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "DRIFT_ACKS=") {
			out = append(out, kv)
		}
	}
	return out
}

func (e edit) apply(root string) error {
	path := filepath.Join(root, e.file)
	src, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	n := strings.Count(string(src), e.old)
	switch {
	case e.every && n == 0, !e.every && n != 1:
		return fmt.Errorf("the seed no longer applies: %q occurs %d times in %s", e.old, n, e.file)
	}
	files := []string{path}
	if e.every {
		files, _ = filepath.Glob(filepath.Join(filepath.Dir(path), "*.go"))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		if err := os.WriteFile(f, []byte(strings.ReplaceAll(string(b), e.old, e.new)), 0o644); err != nil {
			return err
		}
	}
	return nil
}
