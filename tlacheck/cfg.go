package tlacheck

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
	p := &cfgParser{toks: toks, cfg: &Config{Substs: map[string]string{}, CheckDeadlock: true}}
	for p.peek().kind != tEOF {
		if err := p.section(); err != nil {
			return nil, err
		}
	}
	if err := p.cfg.validate(); err != nil {
		return nil, err
	}
	return p.cfg, nil
}

// cfgParser walks the tokens of a .cfg file, filling cfg.
type cfgParser struct {
	toks []token
	i    int
	cfg  *Config
}

func (p *cfgParser) peek() token { return p.toks[p.i] }

// isOp reports whether the next token is the operator text.
func (p *cfgParser) isOp(text string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == text
}

func isCfgKeyword(t token) bool { return (t.kind == tIdent || t.kind == tKw) && cfgKeywords[t.text] }

// name reports whether the next token is a name (not a config keyword).
func (p *cfgParser) name() bool { return p.peek().kind == tIdent && !isCfgKeyword(p.peek()) }

// names reads a list of names, separated by blanks or commas.
func (p *cfgParser) names() []string {
	var out []string
	for p.name() {
		out = append(out, p.peek().text)
		p.i++
		if p.isOp(",") {
			p.i++
		}
	}
	return out
}

// section parses one keyword and what follows it.
func (p *cfgParser) section() error {
	t := p.peek()
	if !isCfgKeyword(t) {
		return errAt(ErrConfig, t.pos, "expected a config keyword (CONSTANTS, INIT, NEXT, SPECIFICATION, INVARIANT, ...), found %q", t.text)
	}
	p.i++
	cfg := p.cfg
	switch t.text {
	case "CONSTANT", "CONSTANTS":
		for p.name() {
			if err := p.constant(); err != nil {
				return err
			}
		}
	case "INIT", "NEXT", "SPECIFICATION", "SYMMETRY":
		ns := p.names()
		if len(ns) != 1 {
			return errAt(ErrConfig, t.pos, "%s takes exactly one name", t.text)
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
		cfg.Invariants = append(cfg.Invariants, p.names()...)
	case "CONSTRAINT", "CONSTRAINTS":
		cfg.Constraints = append(cfg.Constraints, p.names()...)
	case "CHECK_DEADLOCK":
		v := p.peek()
		if v.kind != tKw || (v.text != "TRUE" && v.text != "FALSE") {
			return errAt(ErrConfig, v.pos, "CHECK_DEADLOCK takes TRUE or FALSE")
		}
		p.i++
		cfg.CheckDeadlock = v.text == "TRUE"
	case "PROPERTY", "PROPERTIES":
		return errAt(ErrUnsupported, t.pos, "PROPERTY (temporal properties) is not supported; state safety as INVARIANT")
	default:
		return errAt(ErrUnsupported, t.pos, "config keyword %s is not supported", t.text)
	}
	return nil
}

// constant parses one CONSTANT entry, c = value or c <- Def, and its comma.
func (p *cfgParser) constant() error {
	name := p.peek()
	p.i++
	if p.isOp("(") {
		return errAt(ErrConfig, name.pos, "operator constant %s(...) is not supported", name.text)
	}
	op := p.peek()
	p.i++
	switch {
	case op.kind == tOp && op.text == "=":
		v, n, err := cfgValue(p.toks, p.i)
		if err != nil {
			return err
		}
		p.i = n
		p.cfg.Constants = append(p.cfg.Constants, ConstAssign{Name: name.text, Value: v, Pos: name.pos})
	case op.kind == tOp && op.text == "<-":
		r := p.peek()
		if r.kind != tIdent {
			return errAt(ErrConfig, r.pos, "expected a definition name after <-")
		}
		p.i++
		p.cfg.Substs[name.text] = r.text
	default:
		return errAt(ErrConfig, op.pos, "expected = or <- after constant %s", name.text)
	}
	if p.isOp(",") {
		p.i++
	}
	return nil
}

// validate checks that the config names the behaviour one way: SPECIFICATION or INIT/NEXT.
func (c *Config) validate() error {
	if c.Spec != "" && (c.Init != "" || c.Next != "") {
		return errAt(ErrConfig, Pos{}, "give either SPECIFICATION or INIT/NEXT, not both")
	}
	if c.Spec == "" && (c.Init == "" || c.Next == "") {
		return errAt(ErrConfig, Pos{}, "missing INIT/NEXT or SPECIFICATION")
	}
	return nil
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
