//go:build adversary_weak_roles

package server

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	"github.com/soundgate/soundgate/impl/proto"
)

func init() { lenientRoles = parseRolesLeniently }

// parseRolesLeniently is the roles file as encoding/json reads it (the last of two
// keys, unknown fields ignored, no runs as every run for approvers and operators):
// the reading that widened privilege, for the adversary_weak_roles build only.
func parseRolesLeniently(b []byte) (*Roles, error) {
	var f struct {
		Tokens []struct {
			Name, Token, Role string
			Runs              []string
		}
	}
	if err := json.Unmarshal(b, &f); err != nil || len(f.Tokens) == 0 {
		return nil, &RolesError{Reason: fmt.Sprint("not a roles file: ", err)}
	}
	var rs Roles
	for _, t := range f.Tokens {
		role, ok := proto.ParseRole(t.Role)
		if !ok || len(t.Token) < tokenBytesFloor {
			return nil, &RolesError{Reason: "bad token " + t.Name}
		}
		rs.creds = append(rs.creds, Credential{Name: t.Name, Role: role, Runs: t.Runs, hash: sha256.Sum256([]byte(t.Token))})
	}
	return &rs, nil
}
