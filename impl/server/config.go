package server

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// Limits of the server itself (the core has its own, in core.Limits). A zero field
// takes its default.
type Limits struct {
	ConnectionsMax int           // open connections; one more is refused with overloaded
	WriteQueueMax  int           // answers queued per connection before its reader pauses
	WriteTimeout   time.Duration // a peer that does not read its answers for this long is dropped
	HelloTimeout   time.Duration // a connection that does not say hello within this is closed
}

// DefaultLimits are the server limits of `soundgate serve` unless flags change them.
func DefaultLimits() Limits {
	return Limits{ConnectionsMax: 4096, WriteQueueMax: 1024, WriteTimeout: 10 * time.Second,
		HelloTimeout: 10 * time.Second}
}

// withDefaults fills every zero field of l with its default, so that a caller setting
// one limit does not set the others to zero (a zero write queue would block forever).
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.ConnectionsMax <= 0 {
		l.ConnectionsMax = d.ConnectionsMax
	}
	if l.WriteQueueMax <= 0 {
		l.WriteQueueMax = d.WriteQueueMax
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.HelloTimeout <= 0 {
		l.HelloTimeout = d.HelloTimeout
	}
	return l
}

// Credential is one token of the roles file and what it may do.
type Credential struct {
	Name string     // for logs; never the secret
	Role proto.Role // agent, approver or operator
	// Runs are the run ids (path.Match patterns, "*" for all) the token may act on.
	// Empty means all runs for approvers and operators; an agent must name its runs.
	Runs []string
	hash [sha256.Size]byte
}

// Allows reports whether the credential's scope covers run r.
func (c *Credential) Allows(r core.RunID) bool {
	if len(c.Runs) == 0 {
		return c.Role != proto.RoleAgent
	}
	for _, p := range c.Runs {
		if ok, _ := path.Match(p, string(r)); ok {
			return true
		}
	}
	return false
}

// Roles is the set of credentials the server accepts.
type Roles struct{ creds []Credential }

// ErrRolesFile reports a roles file that cannot be used; the server refuses to start.
var ErrRolesFile = errors.New("soundgate/server: bad roles file")

// rolesFile is the JSON layout of a roles file (see docs/server.md).
type rolesFile struct {
	Tokens []struct {
		Name  string   `json:"name"`
		Token string   `json:"token"`
		Role  string   `json:"role"`
		Runs  []string `json:"runs"`
	} `json:"tokens"`
}

// LoadRoles reads a roles file. Every token must be unique, at least 16 bytes, and name
// a known role; an agent token must list its runs.
func LoadRoles(file string) (*Roles, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRolesFile, err)
	}
	return ParseRoles(b)
}

// ParseRoles parses the JSON of a roles file; see LoadRoles.
func ParseRoles(b []byte) (*Roles, error) {
	var f rolesFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrRolesFile, err)
	}
	if len(f.Tokens) == 0 {
		return nil, fmt.Errorf("%w: no tokens", ErrRolesFile)
	}
	var rs Roles
	seen := map[string]bool{}
	for i, t := range f.Tokens {
		role, ok := proto.ParseRole(t.Role)
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: token %d (%s): role %q is not agent, approver or operator", ErrRolesFile, i, t.Name, t.Role)
		case len(t.Token) < 16 || len(t.Token) > proto.TokenBytesMax:
			return nil, fmt.Errorf("%w: token %d (%s): a token must have 16 to %d bytes", ErrRolesFile, i, t.Name, proto.TokenBytesMax)
		case seen[t.Token]:
			return nil, fmt.Errorf("%w: token %d (%s): the same token appears twice", ErrRolesFile, i, t.Name)
		case role == proto.RoleAgent && len(t.Runs) == 0:
			return nil, fmt.Errorf("%w: token %d (%s): an agent token must list its runs (\"*\" for all)", ErrRolesFile, i, t.Name)
		}
		for _, p := range t.Runs {
			if _, err := path.Match(p, ""); err != nil {
				return nil, fmt.Errorf("%w: token %d (%s): bad run pattern %q", ErrRolesFile, i, t.Name, p)
			}
		}
		seen[t.Token] = true
		name := t.Name
		if name == "" {
			name = fmt.Sprintf("token-%d", i)
		}
		rs.creds = append(rs.creds, Credential{Name: name, Role: role, Runs: t.Runs, hash: sha256.Sum256([]byte(t.Token))})
	}
	return &rs, nil
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

// allowedMethods says which role may call which method.
func allowed(role proto.Role, m proto.Method) bool {
	switch m {
	case proto.MethodStatus:
		return true
	case proto.MethodAdmit, proto.MethodComplete:
		return role == proto.RoleAgent
	case proto.MethodDecide:
		return role == proto.RoleApprover
	case proto.MethodOpen, proto.MethodCancel, proto.MethodFence:
		return role == proto.RoleOperator
	}
	return false
}
