package tla

import (
	"fmt"
	"strconv"
)

// Config is a parsed TLC model configuration (.cfg file).
type Config struct {
	// Constants holds CONSTANT c = value assignments, in file order.
	Constants []ConstAssign
	// Substs holds CONSTANT c <- Def substitutions (constant or operator replaced by a definition).
	Substs map[string]string
	// Init and Next name the initial predicate and next-state action (INIT/NEXT).
	Init, Next string
	// Spec names a formula Init /\ [][Next]_vars (SPECIFICATION).
	Spec string
	// Invariants names the invariants to check (INVARIANT(S)).
	Invariants []string
	// Constraints names state constraints (CONSTRAINT(S)).
	Constraints []string
	// Symmetry names a set of permutations (SYMMETRY), empty when none.
	Symmetry string
	// CheckDeadlock is CHECK_DEADLOCK; true unless the file says FALSE.
	CheckDeadlock bool
}

// ConstAssign is one CONSTANT name = value line.
type ConstAssign struct {
	Name  string
	Value Value
	Pos   Pos
}

var cfgKeywords = map[string]bool{
	"CONSTANT": true, "CONSTANTS": true, "INIT": true, "NEXT": true, "SPECIFICATION": true,
	"INVARIANT": true, "INVARIANTS": true, "PROPERTY": true, "PROPERTIES": true,
	"CONSTRAINT": true, "CONSTRAINTS": true, "ACTION_CONSTRAINT": true,
	"ACTION_CONSTRAINTS": true, "SYMMETRY": true, "VIEW": true, "CHECK_DEADLOCK": true,
	"POSTCONDITION": true, "ALIAS": true,
}

// ParseConfig parses the text of a TLC .cfg file.
func ParseConfig(src string) (cfg *Config, err error) {
	toks, lerr := lex(src)
	if lerr != nil {
		le := *lerr.(*Error)
		le.Kind = ErrConfig
		return nil, &le
	}
	cfg = &Config{Substs: map[string]string{}, CheckDeadlock: true}
	i := 0
	peek := func() token { return toks[i] }
	isKw := func(t token) bool { return (t.kind == tIdent || t.kind == tKw) && cfgKeywords[t.text] }
	fail := func(p Pos, format string, args ...any) (*Config, error) {
		return nil, errAt(ErrConfig, p, format, args...)
	}
	names := func() []string {
		var out []string
		for peek().kind == tIdent && !isKw(peek()) {
			out = append(out, peek().text)
			i++
			if peek().kind == tOp && peek().text == "," {
				i++
			}
		}
		return out
	}
	for peek().kind != tEOF {
		t := peek()
		if !isKw(t) {
			return fail(t.pos, "expected a config keyword (CONSTANTS, INIT, NEXT, SPECIFICATION, INVARIANT, ...), found %q", t.text)
		}
		i++
		switch t.text {
		case "CONSTANT", "CONSTANTS":
			for peek().kind == tIdent && !isKw(peek()) {
				name := peek()
				i++
				if peek().kind == tOp && peek().text == "(" {
					return fail(name.pos, "operator constant %s(...) is not supported", name.text)
				}
				op := peek()
				i++
				switch {
				case op.kind == tOp && op.text == "=":
					v, n, perr := cfgValue(toks, i)
					if perr != nil {
						return nil, perr
					}
					i = n
					cfg.Constants = append(cfg.Constants, ConstAssign{Name: name.text, Value: v, Pos: name.pos})
				case op.kind == tOp && op.text == "<-":
					r := peek()
					if r.kind != tIdent {
						return fail(r.pos, "expected a definition name after <-")
					}
					i++
					cfg.Substs[name.text] = r.text
				default:
					return fail(op.pos, "expected = or <- after constant %s", name.text)
				}
				if peek().kind == tOp && peek().text == "," {
					i++
				}
			}
		case "INIT", "NEXT", "SPECIFICATION", "SYMMETRY":
			ns := names()
			if len(ns) != 1 {
				return fail(t.pos, "%s takes exactly one name", t.text)
			}
			switch t.text {
			case "INIT":
				cfg.Init = ns[0]
			case "NEXT":
				cfg.Next = ns[0]
			case "SPECIFICATION":
				cfg.Spec = ns[0]
			default:
				cfg.Symmetry = ns[0]
			}
		case "INVARIANT", "INVARIANTS":
			cfg.Invariants = append(cfg.Invariants, names()...)
		case "CONSTRAINT", "CONSTRAINTS":
			cfg.Constraints = append(cfg.Constraints, names()...)
		case "CHECK_DEADLOCK":
			v := peek()
			if v.kind != tKw || (v.text != "TRUE" && v.text != "FALSE") {
				return fail(v.pos, "CHECK_DEADLOCK takes TRUE or FALSE")
			}
			i++
			cfg.CheckDeadlock = v.text == "TRUE"
		case "PROPERTY", "PROPERTIES":
			return nil, errAt(ErrUnsupported, t.pos, "PROPERTY (temporal properties) is not supported; state safety as INVARIANT")
		default:
			return nil, errAt(ErrUnsupported, t.pos, "config keyword %s is not supported", t.text)
		}
	}
	if cfg.Spec != "" && (cfg.Init != "" || cfg.Next != "") {
		return fail(Pos{}, "give either SPECIFICATION or INIT/NEXT, not both")
	}
	if cfg.Spec == "" && (cfg.Init == "" || cfg.Next == "") {
		return fail(Pos{}, "missing INIT/NEXT or SPECIFICATION")
	}
	return cfg, nil
}

// cfgValue parses a constant value: integer, string, TRUE/FALSE, model value, or a
// set {...} / tuple <<...>> of values.
func cfgValue(toks []token, i int) (Value, int, error) {
	t := toks[i]
	switch {
	case t.kind == tNum:
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			return nil, i, errAt(ErrConfig, t.pos, "bad number %s", t.text)
		}
		return mkInt(n), i + 1, nil
	case t.kind == tOp && t.text == "-" && toks[i+1].kind == tNum:
		n, err := strconv.ParseInt(toks[i+1].text, 10, 64)
		if err != nil {
			return nil, i, errAt(ErrConfig, t.pos, "bad number")
		}
		return mkInt(-n), i + 2, nil
	case t.kind == tStr:
		return Str(t.text), i + 1, nil
	case t.kind == tKw && (t.text == "TRUE" || t.text == "FALSE"):
		return Bool(t.text == "TRUE"), i + 1, nil
	case t.kind == tIdent && !cfgKeywords[t.text]:
		return mkModel(t.text), i + 1, nil
	case t.kind == tOp && (t.text == "{" || t.text == "<<"):
		closer := "}"
		if t.text == "<<" {
			closer = ">>"
		}
		i++
		var elems []Value
		for !(toks[i].kind == tOp && toks[i].text == closer) {
			v, n, err := cfgValue(toks, i)
			if err != nil {
				return nil, i, err
			}
			elems = append(elems, v)
			i = n
			if toks[i].kind == tOp && toks[i].text == "," {
				i++
				continue
			}
			if !(toks[i].kind == tOp && toks[i].text == closer) {
				return nil, i, errAt(ErrConfig, toks[i].pos, "expected , or %s in a config value", closer)
			}
		}
		if closer == "}" {
			return mkSet(elems), i + 1, nil
		}
		return mkTuple(elems), i + 1, nil
	}
	return nil, i, errAt(ErrConfig, t.pos, "expected a value (number, string, TRUE/FALSE, model value, {...}), found %s", describe(t))
}

// String summarises the config.
func (c *Config) String() string {
	return fmt.Sprintf("init=%s next=%s spec=%s inv=%v", c.Init, c.Next, c.Spec, c.Invariants)
}
