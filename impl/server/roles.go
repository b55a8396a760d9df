package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/internal/strictjson"
)

// Credential is one token of the roles file and what it may do.
type Credential struct {
	Name string     // for logs and the audit trail; never the secret
	Role proto.Role // agent, approver or operator
	// Runs are the run ids (path.Match patterns, "*" for all) the token may act on;
	// a roles file must list them for every token. In a longer pattern * and ? do not
	// match a "/" (path.Match's rule), so "team-a-*" does not cover "team-a-x/y".
	Runs []string
	hash [sha256.Size]byte
}

// Allows reports whether the credential's scope covers run r. No pattern covers
// nothing: a scope is never widened by default.
func (c *Credential) Allows(r core.RunID) bool {
	if lenientRoles != nil && len(c.Runs) == 0 && c.Role != proto.RoleAgent {
		return true
	}
	for _, p := range c.Runs {
		// "*" alone is every run, as the roles file's docs say: path.Match's * would
		// stop at a "/", and run ids are opaque strings that may hold one.
		if p == "*" {
			return true
		}
		if ok, _ := path.Match(p, string(r)); ok {
			return true
		}
	}
	return false
}

// Roles is the set of credentials the server accepts.
type Roles struct {
	creds    []Credential
	warnings []string
}

// Len returns how many tokens rs holds.
func (rs *Roles) Len() int { return len(rs.creds) }

// Warnings are what LoadRoles accepted but an operator should hear about (a roles
// file that others may read).
func (rs *Roles) Warnings() []string { return rs.warnings }

// ErrRolesFile reports a roles file that cannot be used; the server refuses to start.
var ErrRolesFile = errors.New("soundgate/server: bad roles file")

// RolesError says where a roles file is wrong. It matches ErrRolesFile.
type RolesError struct {
	File   string // "" when parsed from memory
	Line   int    // 0 when it is about the whole file
	Reason string
}

func (e *RolesError) Error() string {
	var b strings.Builder
	b.WriteString(ErrRolesFile.Error())
	if e.File != "" {
		b.WriteString(" " + e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	b.WriteString(": " + e.Reason)
	return b.String()
}

func (e *RolesError) Unwrap() error { return ErrRolesFile }

// RolesOptions say how strictly a roles file's tokens are judged.
type RolesOptions struct {
	// AllowWeakTokens accepts tokens that are short, of little variety or
	// placeholders (the demo file's): for trying the gate out, never for use.
	AllowWeakTokens bool
}

const (
	// TokenBytesMin is the shortest token accepted without AllowWeakTokens.
	TokenBytesMin = 32
	// tokenBytesFloor is the shortest token accepted at all.
	tokenBytesFloor = 16
	// tokenVarietyMin is how many different bytes a token needs without
	// AllowWeakTokens: a run of one character is not a secret.
	tokenVarietyMin = 10
)

// LoadRoles reads a roles file: see ParseRoles. A file that every user may write is
// refused (anyone could make themselves an operator); one that the group may write,
// or others may read, is accepted with a warning (a checkout under umask 002 is
// group-writable, and the group is often the user's own).
func LoadRoles(file string, o RolesOptions) (*Roles, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, &RolesError{File: file, Reason: err.Error()}
	}
	if perm := st.Mode().Perm(); perm&0o002 != 0 {
		return nil, &RolesError{File: file, Reason: fmt.Sprintf("mode %04o lets every user write it: chmod 600", perm)}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, &RolesError{File: file, Reason: err.Error()}
	}
	rs, err := ParseRoles(b, o)
	if err != nil {
		var re *RolesError
		if errors.As(err, &re) {
			re.File = file
		}
		return nil, err
	}
	if perm := st.Mode().Perm(); perm&0o064 != 0 {
		rs.warnings = append(rs.warnings, fmt.Sprintf("roles file %s has mode %04o: others may read its tokens or change them (chmod 600)", file, perm))
	}
	return rs, nil
}

// ParseRoles parses the JSON of a roles file (docs/server.md). It is strict, since
// every leniency has widened privilege: an unknown field (a misspelt "runs"), a key
// given twice (a second "role"), a missing, null or empty "runs", an unknown role, a
// repeated name or token, each is an error naming its line. Every token lists its
// runs ("*" for all); tokens must be strong unless o.AllowWeakTokens.
func ParseRoles(b []byte, o RolesOptions) (*Roles, error) {
	if lenientRoles != nil {
		return lenientRoles(b)
	}
	entries, err := scanRoles(b)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, &RolesError{Reason: `no tokens (the file holds {"tokens": [...]})`}
	}
	var rs Roles
	names, tokens := map[string]int{}, map[string]int{}
	for _, e := range entries {
		role, ok := proto.ParseRole(e.role)
		bad := func(format string, args ...any) error {
			return &RolesError{Line: e.line, Reason: fmt.Sprintf("token %q: ", e.name) + fmt.Sprintf(format, args...)}
		}
		switch {
		case e.name == "":
			return nil, &RolesError{Line: e.line, Reason: `a token needs a "name" (for logs and the audit trail)`}
		case core.CheckBy(e.name) != nil: // the audit trail records it, on one line
			return nil, &RolesError{Line: e.line, Reason: fmt.Sprintf("token name %q: %v", e.name, core.CheckBy(e.name))}
		case names[e.name] != 0:
			return nil, bad("the name is also on line %d", names[e.name])
		case !e.has["role"]:
			return nil, bad(`no "role"`)
		case !ok:
			return nil, bad("role %q is not agent, approver or operator", e.role)
		case len(e.token) < tokenBytesFloor || len(e.token) > proto.TokenBytesMax:
			return nil, bad("a token must have %d to %d bytes", tokenBytesFloor, proto.TokenBytesMax)
		case tokens[e.token] != 0:
			return nil, bad("the same token is also on line %d", tokens[e.token])
		case !e.has["runs"] || len(e.runs) == 0:
			return nil, bad(`"runs" must list the runs it may act on ("*" for all)`)
		}
		if why := weakToken(e.token); why != "" && !o.AllowWeakTokens {
			return nil, bad("the token is weak (%s): use %d or more random bytes, or --allow-weak-tokens to try the gate out", why, TokenBytesMin)
		}
		for _, p := range e.runs {
			if _, err := path.Match(p, ""); err != nil || p == "" {
				return nil, bad("bad run pattern %q", p)
			}
		}
		names[e.name], tokens[e.token] = e.line, e.line
		rs.creds = append(rs.creds, Credential{Name: e.name, Role: role, Runs: e.runs, hash: sha256.Sum256([]byte(e.token))})
	}
	return &rs, nil
}

// weakToken says why a token is weak, or "".
func weakToken(t string) string {
	var seen [256]bool
	variety := 0
	for i := 0; i < len(t); i++ {
		if !seen[t[i]] {
			seen[t[i]], variety = true, variety+1
		}
	}
	switch {
	case len(t) < TokenBytesMin:
		return fmt.Sprintf("%d bytes", len(t))
	case variety < tokenVarietyMin:
		return fmt.Sprintf("%d different characters", variety)
	case strings.Contains(strings.ToLower(t), "change-me"):
		return `a placeholder, "change-me"`
	}
	return ""
}

// roleEntry is one object of a roles file's "tokens", as written.
type roleEntry struct {
	line              int
	name, token, role string
	runs              []string
	has               map[string]bool
}

// scanRoles reads the layout {"tokens": [{"name", "token", "role", "runs"}, ...]}
// token by token, so that an unknown or repeated key is an error with its line
// (encoding/json keeps the last of two keys and ignores unknown ones).
func scanRoles(b []byte) ([]roleEntry, error) {
	s := strictjson.New(b)
	var entries []roleEntry
	err := s.Object("the file", func(key string) error {
		if key != "tokens" {
			return s.Errorf("unknown field %q (the file holds only \"tokens\")", key)
		}
		return s.Array("\"tokens\"", func() error {
			e := roleEntry{has: map[string]bool{}}
			err := s.Object("a token", func(key string) error {
				if e.line == 0 {
					e.line = s.Line()
				}
				e.has[key] = true
				switch key {
				case "name":
					return s.String(key, &e.name)
				case "token":
					return s.String(key, &e.token)
				case "role":
					return s.String(key, &e.role)
				case "runs":
					return s.Array(`"runs"`, func() error {
						var r string
						err := s.String("a run pattern", &r)
						e.runs = append(e.runs, r)
						return err
					})
				}
				return s.Errorf("unknown field %q (a token has name, token, role and runs)", key)
			})
			if e.line == 0 {
				e.line = s.Line()
			}
			entries = append(entries, e)
			return err
		})
	})
	if err != nil {
		return nil, rolesError(err)
	}
	if err := s.End("the roles object"); err != nil {
		return nil, rolesError(err)
	}
	return entries, nil
}

// rolesError is a fault of the file's JSON (strictjson) as a RolesError.
func rolesError(err error) error {
	var je *strictjson.Error
	if errors.As(err, &je) {
		return &RolesError{Line: je.Line, Reason: je.Msg}
	}
	return err
}

// holds reports whether rs has c's token with c's name, role and runs.
func (rs *Roles) holds(c *Credential) bool {
	for i := range rs.creds {
		if n := &rs.creds[i]; n.hash == c.hash && n.Name == c.Name && n.Role == c.Role && slices.Equal(n.Runs, c.Runs) {
			return true
		}
	}
	return false
}

// Lookup returns the credential of token, comparing in constant time against every
// known token so that timing does not tell which tokens exist.
func (rs *Roles) Lookup(token string) (*Credential, bool) {
	h := sha256.Sum256([]byte(token))
	var found *Credential
	for i := range rs.creds {
		if subtle.ConstantTimeCompare(h[:], rs.creds[i].hash[:]) == 1 {
			found = &rs.creds[i]
		}
	}
	return found, found != nil
}
