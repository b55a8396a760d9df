package drift

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

func mark(b bool) string {
	if b {
		return "yes"
	}
	return "-"
}

func specMark(r Row) string {
	switch {
	case r.SpecBehaviour:
		return "behaviour"
	case r.Spec:
		return "text"
	}
	return "-"
}

// Text writes the report for a terminal: the standing rules' findings, the table of
// touched actions, the other changes, the evidence, and one summary line last.
func (rep *Report) Text(w io.Writer) {
	for _, f := range rep.Standing {
		fmt.Fprintf(w, "drift: %s\n", f)
	}
	if len(rep.Rows) > 0 {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "action\tspec\tmodel\tcore\tevidence\tverdict\twhy")
		for _, r := range rep.Rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Action, specMark(r), mark(r.Model), mark(r.Core),
				strings.Join(r.Evidence, ","), r.Verdict, strings.Join(r.Why, "; "))
		}
		tw.Flush()
	}
	for _, c := range rep.Shell {
		fmt.Fprintf(w, "drift: shell: %s %s (%s)\n", c.Kind, c.Key(), c.File)
	}
	for _, c := range rep.Unmapped {
		fmt.Fprintf(w, "drift: unmapped: %s %s (%s): no action's implementation reaches it or is reached by it\n", c.Kind, c.Key(), c.File)
	}
	for _, f := range rep.Checks {
		fmt.Fprintf(w, "drift: check changed: %s (its evidence runs again)\n", f)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "drift: note: %s\n", n)
	}
	fmt.Fprintln(w, rep.Summary())
}

// Summary is the report's last line.
func (rep *Report) Summary() string {
	var ev []string
	for _, r := range rep.Results {
		switch {
		case r.Missing:
			ev = append(ev, r.Name+" NOT RUN")
		default:
			ev = append(ev, fmt.Sprintf("%s %s (%v)", r.Name, map[bool]string{true: "passed", false: "FAILED"}[r.Passed], r.Took))
		}
	}
	if len(ev) == 0 {
		ev = []string{"none needed"}
	}
	base := "no base (standing rules only)"
	if rep.Base != "" {
		base = fmt.Sprintf("base %s, %d files changed", rep.Base, rep.Files)
	}
	return fmt.Sprintf("drift: %s; %d directives, %d standing findings; %d actions touched, %d shell and %d unmapped changes, %d files of the checks; evidence: %s; verdict %s (exit %d)",
		base, len(rep.directive), len(rep.Standing), len(rep.Rows), len(rep.Shell), len(rep.Unmapped), len(rep.Checks), strings.Join(ev, ", "), rep.Verdict, rep.ExitCode)
}

// Markdown writes the report as a Markdown document (a PR comment, a CI artifact).
func (rep *Report) Markdown(w io.Writer) {
	fmt.Fprintf(w, "# Drift audit\n\n%s\n\n", strings.TrimPrefix(rep.Summary(), "drift: "))
	if len(rep.Standing) > 0 {
		fmt.Fprintf(w, "## Standing rules\n\n")
		for _, f := range rep.Standing {
			fmt.Fprintf(w, "- `%s` %s: %s\n", f.Pos, f.Rule, mdEscape(f.Msg))
		}
		fmt.Fprintln(w)
	}
	if len(rep.Rows) > 0 {
		fmt.Fprintf(w, "## Actions touched\n\n| action | spec | model | core | evidence | verdict | why |\n|---|---|---|---|---|---|---|\n")
		for _, r := range rep.Rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Action, specMark(r), mark(r.Model), mark(r.Core),
				strings.Join(r.Evidence, ", "), r.Verdict, mdEscape(strings.Join(r.Why, "; ")))
		}
		fmt.Fprintln(w)
	}
	if len(rep.Results) > 0 {
		fmt.Fprintf(w, "## Evidence\n\n| check | result | time | last line |\n|---|---|---|---|\n")
		for _, r := range rep.Results {
			fmt.Fprintf(w, "| %s | %s | %v | %s |\n", r.Name, map[bool]string{true: "passed", false: "**failed**"}[r.Passed], r.Took, mdEscape(r.Last))
		}
		fmt.Fprintln(w)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "- note: %s\n", mdEscape(n))
	}
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "<", "&lt;").Replace(s)
}

// GitHub writes workflow commands that annotate the findings and verdicts in a PR.
func (rep *Report) GitHub(w io.Writer) {
	for _, f := range rep.Standing {
		file, line := f.Pos, ""
		if i := strings.LastIndex(f.Pos, ":"); i > 0 {
			file, line = f.Pos[:i], f.Pos[i+1:]
		}
		fmt.Fprintf(w, "::error file=%s,line=%s,title=drift %s::%s\n", ghEscape(file), ghEscape(line), f.Rule, ghEscape(f.Msg))
	}
	for _, r := range rep.Rows {
		if r.Verdict != OK {
			level := map[Verdict]string{Review: "warning", Drift: "error"}[r.Verdict]
			fmt.Fprintf(w, "::%s title=drift %s::%s: %s\n", level, r.Action, r.Verdict, ghEscape(strings.Join(r.Why, "; ")))
		}
	}
}

func ghEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
