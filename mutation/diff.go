package mutation

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// ErrGit is returned when --diff cannot ask git which lines changed.
var ErrGit = errors.New("soundgate/mutation: git diff failed")

// lineRange is an inclusive range of lines of the new version of a file.
type lineRange struct{ from, to int }

var hunkHeader = regexp.MustCompile(`^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@`)

// changedLines asks git which lines of which files changed between base and the
// working tree. Paths in the result are relative to modRoot, like Mutant.File.
func changedLines(dir, base, modRoot string) (map[string][]lineRange, error) {
	top, err := gitOut(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, err
	}
	out, err := gitOut(dir, "diff", "--no-color", "--no-ext-diff", "-U0", base, "--", ".")
	if err != nil {
		return nil, err
	}
	root := strings.TrimSpace(string(top))
	res := map[string][]lineRange{}
	var file string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "+++ "):
			file = ""
			name := strings.TrimPrefix(line, "+++ ")
			if name == "/dev/null" {
				continue
			}
			name = strings.TrimPrefix(name, "b/")
			rel, err := filepath.Rel(modRoot, filepath.Join(root, name))
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			file = filepath.ToSlash(rel)
		case file != "" && strings.HasPrefix(line, "@@"):
			m := hunkHeader.FindStringSubmatch(line)
			if m == nil {
				return nil, fmt.Errorf("%w: unreadable hunk %q", ErrGit, line)
			}
			from, _ := strconv.Atoi(m[1])
			n := 1
			if m[2] != "" {
				n, _ = strconv.Atoi(m[2])
			}
			if n == 0 {
				continue // a pure deletion: no line of the new file changed
			}
			res[file] = append(res[file], lineRange{from, from + n - 1})
		}
	}
	return res, nil
}

func gitOut(dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(context.Background(), "git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: git %s: %v: %s", ErrGit, strings.Join(args, " "), err,
			strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// touches reports whether lines [from, to] meet any of the ranges.
func touches(rs []lineRange, from, to int) bool {
	for _, r := range rs {
		if from <= r.to && r.from <= to {
			return true
		}
	}
	return false
}

// unifiedDiff renders the mutant as a unified diff of the lines it changes, with
// one line of context, so a reviewer sees the change without opening the file.
func unifiedDiff(m *Mutant, src []byte) string {
	mut := m.Apply(src)
	// Lines of the original spanned by the change, and the same lines mutated.
	lineStart := bytes.LastIndexByte(src[:m.start], '\n') + 1
	endOld := m.end
	if i := bytes.IndexByte(src[endOld:], '\n'); i >= 0 {
		endOld += i
	} else {
		endOld = len(src)
	}
	endNew := endOld + len(m.Replacement) - (m.end - m.start)
	oldLines := strings.Split(string(src[lineStart:endOld]), "\n")
	newLines := strings.Split(string(mut[lineStart:endNew]), "\n")
	first := bytes.Count(src[:lineStart], []byte("\n")) + 1
	var before, after string
	if lineStart > 0 {
		prev := bytes.LastIndexByte(src[:lineStart-1], '\n') + 1
		before = string(src[prev : lineStart-1])
	}
	if endOld < len(src) {
		rest := src[endOld+1:]
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			rest = rest[:i]
		}
		after = string(rest)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "--- a/%s\n+++ b/%s\n", m.File, m.File)
	ctxBefore := 0
	if lineStart > 0 {
		ctxBefore = 1
	}
	ctxAfter := 0
	if endOld < len(src) {
		ctxAfter = 1
	}
	fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", first-ctxBefore, len(oldLines)+ctxBefore+ctxAfter,
		first-ctxBefore, len(newLines)+ctxBefore+ctxAfter)
	if ctxBefore == 1 {
		b.WriteString(" " + before + "\n")
	}
	for _, l := range oldLines {
		b.WriteString("-" + l + "\n")
	}
	for _, l := range newLines {
		b.WriteString("+" + l + "\n")
	}
	if ctxAfter == 1 {
		b.WriteString(" " + after + "\n")
	}
	return b.String()
}
