package mcpproxy

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/soundgate/soundgate/internal/strictjson"
)

// PolicyBytesMax bounds a policy file: it is read whole at start.
const PolicyBytesMax = 1 << 20

// ErrPolicy is wrapped by every error of a policy file (errors.Is), so that a caller
// can tell a bad policy, which it must refuse to start with, from an I/O failure.
var ErrPolicy = errors.New("soundgate/mcpproxy: bad policy")

// PolicyError is a fault of a policy file, with the line it is on (1-based; 0 when the
// fault is the file as a whole).
type PolicyError struct {
	File string
	Line int
	Msg  string
}

func (e *PolicyError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("bad policy file %s line %d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("bad policy file %s: %s", e.File, e.Msg)
}

func (e *PolicyError) Unwrap() error { return ErrPolicy }

// Mode says whether a tool's calls need their own approval. Every call asks the gate
// either way: an ungated call is still held while its run waits for a decision.
type Mode string

// The two modes a policy may give a tool, spelled as in the file.
const (
	Gated   Mode = "gated"
	Ungated Mode = "ungated"
)

// ServerPolicy is what a policy says about one server.
type ServerPolicy struct {
	// Trusted lets the server's own annotations decide for the tools the policy does
	// not name (Policy.Mode); an untrusted server's annotations are ignored.
	Trusted bool
	// Tools gives named tools a mode.
	Tools map[string]Mode

	toolLines map[string]int // where each tool is named in the file, for CheckTools
}

// Policy maps (server, tool) to a Mode. The zero Policy gates everything.
type Policy struct {
	Servers map[string]ServerPolicy

	file string // the file it was parsed from, for CheckTools
}

// CheckTools refuses a policy that names, for server, a tool the server does not
// have: a misspelt name would leave the real tool to the default, and on a trusted
// server the default of a read-only tool is ungated. The error names the line.
func (p *Policy) CheckTools(server string, tools []string) error {
	sp, ok := p.Servers[server]
	if !ok {
		return nil
	}
	have := map[string]bool{}
	for _, t := range tools {
		have[t] = true
	}
	var bad []string
	for name := range sp.Tools {
		if !have[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Slice(bad, func(i, j int) bool { return sp.toolLines[bad[i]] < sp.toolLines[bad[j]] })
	sort.Strings(tools)
	return &PolicyError{File: p.file, Line: sp.toolLines[bad[0]],
		Msg: fmt.Sprintf("tool %q of server %q is not a tool of the server (it has: %s)", bad[0], server, strings.Join(tools, ", "))}
}

// Annotations are the hints of a tool that a trusted server may use as defaults.
type Annotations struct {
	ReadOnly    bool // readOnlyHint: true
	Destructive bool // destructiveHint given and true (it contradicts readOnlyHint; the proxy then gates)
}

// Mode decides whether calls of tool on server are gated, and says why in words: the
// policy's entry for the tool; else, for a trusted server, ungated iff the tool says it
// is read-only and does not say it is destructive; else gated (fail closed).
func (p *Policy) Mode(server, tool string, a *Annotations) (Mode, string) {
	sp, ok := p.Servers[server]
	if !ok {
		return Gated, fmt.Sprintf("server %q is not in the policy: gated", server)
	}
	if m, ok := sp.Tools[tool]; ok {
		return m, fmt.Sprintf("the policy names %s/%s %s", server, tool, m)
	}
	if !sp.Trusted {
		return Gated, fmt.Sprintf("the policy does not name %s/%s and the server is not trusted: gated", server, tool)
	}
	if a != nil && a.ReadOnly && !a.Destructive {
		return Ungated, fmt.Sprintf("trusted server %q marks %s read-only: ungated", server, tool)
	}
	return Gated, fmt.Sprintf("trusted server %q does not mark %s read-only (and not destructive): gated", server, tool)
}

// LoadPolicy reads and parses a policy file (ParsePolicy). An empty path is the zero
// Policy: every tool gated.
func LoadPolicy(path string) (*Policy, error) {
	if path == "" {
		return &Policy{}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, PolicyBytesMax+1))
	if err != nil {
		return nil, fmt.Errorf("policy file %s: %w", path, err)
	}
	return ParsePolicy(path, b)
}

// ParsePolicy parses a policy (docs/integrations/mcp.md): strictly, because every
// leniency of a policy would widen what runs without a human. A field it does not
// know, a key given twice, a mode other than "gated" or "ungated", a wildcard name,
// a value of the wrong type or trailing data is an error naming its line.
func ParsePolicy(file string, b []byte) (*Policy, error) {
	if len(b) > PolicyBytesMax {
		return nil, &PolicyError{File: file, Msg: fmt.Sprintf("longer than %d bytes", PolicyBytesMax)}
	}
	if !utf8.Valid(b) {
		return nil, &PolicyError{File: file, Msg: "not valid UTF-8"}
	}
	p := &policyParser{file: file, Scanner: strictjson.New(b)}
	pol, err := p.parse()
	if err != nil {
		return nil, p.policyError(err)
	}
	return pol, nil
}

// policyParser walks a policy's JSON tokens (strictjson), so that every fault names
// its line.
type policyParser struct {
	file string
	*strictjson.Scanner
}

// errAt is a PolicyError at the token just read.
func (p *policyParser) errAt(format string, a ...any) error {
	return &PolicyError{File: p.file, Line: p.Line(), Msg: fmt.Sprintf(format, a...)}
}

// policyError is a fault of the file's JSON (strictjson) as a PolicyError.
func (p *policyParser) policyError(err error) error {
	var je *strictjson.Error
	if errors.As(err, &je) {
		return &PolicyError{File: p.file, Line: je.Line, Msg: je.Msg}
	}
	return err
}

func (p *policyParser) parse() (*Policy, error) {
	pol := &Policy{Servers: map[string]ServerPolicy{}, file: p.file}
	sawServers := false
	err := p.Object("the policy", func(name string) error {
		if name != "servers" {
			return p.errAt("unknown field %q in the policy (the only field is \"servers\")", name)
		}
		sawServers = true
		return p.Object(`"servers"`, func(server string) error {
			if err := checkName("server", server); err != nil {
				return p.errAt("%v", err)
			}
			sp, err := p.server(server)
			if err != nil {
				return err
			}
			pol.Servers[server] = sp
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	if err := p.End("the policy's object"); err != nil {
		return nil, err
	}
	if !sawServers {
		return nil, &PolicyError{File: p.file, Line: 1, Msg: `no "servers" field (an empty policy is {"servers":{}}: everything gated)`}
	}
	return pol, nil
}

func (p *policyParser) server(server string) (ServerPolicy, error) {
	sp := ServerPolicy{Tools: map[string]Mode{}, toolLines: map[string]int{}}
	what := fmt.Sprintf("server %q", server)
	err := p.Object(what, func(field string) error {
		switch field {
		case "trusted":
			t, err := p.Token()
			if err != nil {
				return err
			}
			b, ok := t.(bool)
			if !ok {
				return p.errAt(`"trusted" of %s must be true or false`, what)
			}
			sp.Trusted = b
			return nil
		case "tools":
			return p.Object(fmt.Sprintf(`"tools" of %s`, what), func(tool string) error {
				if err := checkName("tool", tool); err != nil {
					return p.errAt("%s: %v", what, err)
				}
				t, err := p.Token()
				if err != nil {
					return err
				}
				s, ok := t.(string)
				if !ok || (Mode(s) != Gated && Mode(s) != Ungated) {
					return p.errAt(`tool %q of %s: the mode must be "gated" or "ungated", not %s`, tool, what, shownToken(t))
				}
				sp.Tools[tool] = Mode(s)
				sp.toolLines[tool] = p.Line()
				return nil
			})
		}
		return p.errAt(`unknown field %q in %s (its fields are "trusted" and "tools")`, field, what)
	})
	return sp, err
}

// checkName refuses names a reader could take for a pattern: a policy names each
// server and tool, and "*" meaning "all" would be a guess that widens privilege.
func checkName(kind, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("an empty %s name", kind)
	case strings.ContainsAny(name, "*?[]"):
		return fmt.Errorf("%s name %q: wildcards are not supported, name each %s", kind, name, kind)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("%s name %q has leading or trailing spaces", kind, name)
	}
	return nil
}

func shownToken(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		return "an " + map[json.Delim]string{'{': "object", '[': "array"}[v]
	case string:
		return fmt.Sprintf("%q", v)
	case nil:
		return "null"
	}
	return fmt.Sprintf("%v", t)
}
