package proto_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
)

// Every method but hello, pending, watch and unwatch asks for the core operation of
// the same name, every operation but timeout and retire is asked for by exactly one
// method, and Op and MethodOf are inverse: the whole range of both types is checked, so that a method or
// an operation added on one side only fails here.
func TestMethodOps(t *testing.T) {
	for i := 0; i <= math.MaxUint8; i++ {
		m := Method(i)
		op, ok := m.Op()
		want := m.String() != "invalid" && m != MethodHello && m != MethodPending && m != MethodWatch && m != MethodUnwatch
		if ok != want {
			t.Errorf("Method(%d) %q: Op() ok = %v, want %v", i, m, ok, want)
			continue
		}
		if !ok {
			if op != 0 {
				t.Errorf("Method(%d).Op() = %v with ok false, want 0", i, op)
			}
			continue
		}
		if op.String() != m.String() {
			t.Errorf("%s.Op() = %s: the names differ", m, op)
		}
		if back, ok := MethodOf(op); !ok || back != m {
			t.Errorf("MethodOf(%s) = %v, %v; want %s", op, back, ok, m)
		}
	}
	asked := 0
	for i := 0; i <= math.MaxUint8; i++ {
		op := core.Op(i)
		m, ok := MethodOf(op)
		want := op.String() != "invalid" && op.String() != "" && op != core.OpTimeout && op != core.OpRetire
		if ok != want {
			t.Errorf("MethodOf(Op(%d) %q) ok = %v, want %v", i, op, ok, want)
			continue
		}
		if !ok {
			if m != MethodNone {
				t.Errorf("MethodOf(Op(%d)) = %v with ok false, want MethodNone", i, m)
			}
			continue
		}
		asked++
		if back, ok := m.Op(); !ok || back != op {
			t.Errorf("%s.Op() = %v, %v; want %s", m, back, ok, op)
		}
	}
	if asked != len(Methods)-4 {
		t.Errorf("%d operations have a method, want one per method but hello, pending, watch and unwatch (%d)", asked, len(Methods)-4)
	}
}

// TestNewResult: every method, and nothing else, has a result type, the one named after
// it, and each call returns a new value to read an answer into.
func TestNewResult(t *testing.T) {
	for i := 0; i <= math.MaxUint8; i++ {
		m := Method(i)
		r := NewResult(m)
		if name := m.String(); name == "invalid" {
			if r != nil {
				t.Errorf("NewResult(Method(%d)) = %T, want nil", i, r)
			}
		} else if got, want := fmt.Sprintf("%T", r), "*proto."+strings.ToUpper(name[:1])+name[1:]+"Result"; got != want {
			t.Errorf("NewResult(%s) = %s, want %s", m, got, want)
		} else if r == NewResult(m) {
			t.Errorf("NewResult(%s) returned the same value twice", m)
		}
	}
}

// TestEnumNames: the zero values and values out of range are "invalid" by name and the
// null id is the only null one; a name that is not a role parses to RoleNone (never to
// a role with rights, should a caller forget ok), as a name that is not a method parses
// to MethodNone.
func TestEnumNames(t *testing.T) {
	for _, c := range []struct {
		id   ID
		null bool
	}{{ID{}, true}, {IntID(0), false}, {StringID(""), false}, {IntID(-1), false}} {
		if c.id.IsNull() != c.null {
			t.Errorf("%#v.IsNull() = %v", c.id, !c.null)
		}
	}
	for _, c := range []struct {
		r    Role
		name string
	}{{RoleNone, "invalid"}, {RoleAgent, "agent"}, {RoleApprover, "approver"}, {RoleOperator, "operator"}, {RoleOperator + 1, "invalid"}, {255, "invalid"}} {
		if got := c.r.String(); got != c.name {
			t.Errorf("Role(%d).String() = %q, want %q", c.r, got, c.name)
		}
		if r, ok := ParseRole(c.name); (c.name != "invalid") != ok || (ok && r != c.r) {
			t.Errorf("ParseRole(%q) = %v, %v", c.name, r, ok)
		}
	}
	for _, name := range []string{"", "invalid", "Agent", "root"} {
		if r, ok := ParseRole(name); ok || r != RoleNone {
			t.Errorf("ParseRole(%q) = %v, %v; want RoleNone, false", name, r, ok)
		}
		if m, ok := ParseMethod(name); ok || m != MethodNone {
			t.Errorf("ParseMethod(%q) = %v, %v; want MethodNone, false", name, m, ok)
		}
	}
	for _, m := range []Method{MethodNone, MethodUnwatch + 1, 255} {
		if m.String() != "invalid" {
			t.Errorf("Method(%d).String() = %q", m, m.String())
		}
	}
}
