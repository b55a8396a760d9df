package tlacheck

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// evalExpr evaluates a constant expression inside a module that extends every
// supported standard module, with model values a, b, c.
func evalExpr(t *testing.T, src string) (Value, error) {
	t.Helper()
	mod := "---- MODULE T ----\nEXTENDS Naturals, Integers, Sequences, FiniteSets, TLC\n" +
		"CONSTANTS a, b, c\nVARIABLE v\nInit == v = 0\nNext == v' = v\nE ==\n" + src + "\n====\n"
	cfg := "CONSTANTS a = a b = b c = c\nINIT Init\nNEXT Next\n"
	s, err := LoadSource(mod, cfg)
	if err != nil {
		return nil, err
	}
	d, err := s.named("E", "test")
	if err != nil {
		return nil, err
	}
	var v Value
	err = func() (err error) {
		defer catch(&err)
		v = d.body.eval(&ctx{frame: make([]Value, d.frameSize)})
		return nil
	}()
	return v, err
}

func TestEvalSemantics(t *testing.T) {
	cases := []struct{ name, src, want string }{
		// arithmetic (Naturals, Integers)
		{"precedence", "1 + 2 * 3", "7"},
		{"parens", "(1 + 2) * 3", "9"},
		{"minus is left associative", "10 - 3 - 2", "5"},
		{"div floors", "(-7) \\div 2", "-4"},
		{"unary minus binds looser than div", "-7 \\div 2", "-3"},
		{"mod is non-negative", "-7 % 2", "1"},
		{"power", "2^10", "1024"},
		{"unary minus", "-(3 + 1)", "-4"},
		{"comparison", "1 < 2 /\\ 2 =< 2 /\\ 3 >= 3 /\\ 4 > 3 /\\ 1 # 2 /\\ 1 /= 2", "TRUE"},
		// booleans
		{"and", "TRUE /\\ FALSE", "FALSE"},
		{"implies short-circuits", "FALSE => (1 = \"a\")", "TRUE"},
		{"or short-circuits", "TRUE \\/ (1 = \"a\")", "TRUE"},
		{"not binds looser than =", "~ 1 = 2", "TRUE"},
		{"equiv", "TRUE <=> FALSE", "FALSE"},
		{"BOOLEAN", "BOOLEAN", "{FALSE, TRUE}"},
		// sets
		{"set enumeration is normalised", "{3, 1, 2, 1}", "{1, 2, 3}"},
		{"interval and union", "1..3 \\cup {7}", "{1, 2, 3, 7}"},
		{"empty interval", "3..1", "{}"},
		{"intersection", "{1, 2, 3} \\cap {2, 3, 4}", "{2, 3}"},
		{"difference", "{1, 2, 3} \\ {2}", "{1, 3}"},
		{"filter", "{x \\in 1..5 : x % 2 = 0}", "{2, 4}"},
		{"map", "{x * x : x \\in -1..2}", "{0, 1, 4}"},
		{"SUBSET", "SUBSET {1, 2}", "{{}, {1}, {2}, {1, 2}}"},
		{"UNION", "UNION {{1}, {2, 3}}", "{1, 2, 3}"},
		{"Cardinality of SUBSET", "Cardinality(SUBSET (1..4))", "16"},
		{"subseteq", "{1} \\subseteq {1, 2} /\\ ~({3} \\subseteq {1, 2})", "TRUE"},
		{"cross product", "{1, 2} \\X {\"a\"}", "{<<1, \"a\">>, <<2, \"a\">>}"},
		{"notin", "4 \\notin 1..3", "TRUE"},
		{"Nat membership", "3 \\in Nat /\\ -1 \\notin Nat /\\ -1 \\in Int", "TRUE"},
		{"STRING membership", "\"x\" \\in STRING", "TRUE"},
		{"set of sets", "{{2}, {1}} = {{1}, {2}}", "TRUE"},
		// functions
		{"function of 1..n is a tuple", "[x \\in 1..3 |-> x * 2]", "<<2, 4, 6>>"},
		{"function of strings is a record", "[x \\in {\"a\", \"b\"} |-> 0]", "[a |-> 0, b |-> 0]"},
		{"other functions print with :> and @@", "[x \\in {b, a} |-> 1]", "(a :> 1 @@ b :> 1)"},
		{"DOMAIN", "DOMAIN [x \\in {a, b} |-> 1]", "{a, b}"},
		{"application", "[x \\in {a, b} |-> x][b]", "b"},
		{"two-argument function", "[x, y \\in 1..2 |-> x * 10 + y][2, 1]", "21"},
		{":> and @@", "(a :> 1 @@ b :> 2)[b]", "2"},
		{"@@ prefers its left side", "(a :> 1) @@ (a :> 2)", "(a :> 1)"},
		{"EXCEPT with @", "[[x \\in 1..2 |-> x] EXCEPT ![1] = @ + 10]", "<<11, 2>>"},
		{"EXCEPT nested path", "[[r |-> [s |-> 1, t |-> 2]] EXCEPT !.r.s = 5]", "[r |-> [s |-> 5, t |-> 2]]"},
		{"EXCEPT several updates", "[<<1, 2, 3>> EXCEPT ![1] = 0, ![3] = @ * 2]", "<<0, 2, 6>>"},
		{"EXCEPT outside the domain", "[<<1>> EXCEPT ![5] = 0]", "<<1>>"},
		{"function set", "[{1, 2} -> {TRUE}]", "{<<TRUE, TRUE>>}"},
		{"function set size", "Cardinality([1..2 -> 1..3])", "9"},
		{"function set membership", "[x \\in 1..2 |-> 3] \\in [1..2 -> 1..3]", "TRUE"},
		{"record set", "[a : {1, 2}, b : {\"x\"}]", "{[a |-> 1, b |-> \"x\"], [a |-> 2, b |-> \"x\"]}"},
		// records
		{"record fields are sorted", "[b |-> 2, a |-> 1]", "[a |-> 1, b |-> 2]"},
		{"record field", "[a |-> 1, b |-> 2].b", "2"},
		{"record equals function", "[a |-> 1] = [x \\in {\"a\"} |-> 1]", "TRUE"},
		// tuples and sequences
		{"tuple", "<<1, \"x\", TRUE>>", "<<1, \"x\", TRUE>>"},
		{"Append", "Append(<<1>>, 2)", "<<1, 2>>"},
		{"Len", "Len(<<>>) + Len(<<4, 5>>)", "2"},
		{"Head and Tail", "<<Head(<<3, 4>>), Tail(<<3, 4>>)>>", "<<3, <<4>>>>"},
		{"concatenation", "<<1>> \\o <<2, 3>>", "<<1, 2, 3>>"},
		{"SubSeq", "SubSeq(<<1, 2, 3, 4>>, 2, 3)", "<<2, 3>>"},
		{"Seq membership", "<<1, 2>> \\in Seq({1, 2}) /\\ <<3>> \\notin Seq({1, 2})", "TRUE"},
		{"tuple application", "<<7, 8>>[2]", "8"},
		{"empty sequence equals empty function", "<<>> = [x \\in {} |-> 1]", "TRUE"},
		// binders
		{"CHOOSE takes the least in canonical order", "CHOOSE x \\in 1..10 : x * x > 10", "4"},
		{"forall", "\\A x \\in 1..3 : x > 0", "TRUE"},
		{"exists over empty set", "\\E x \\in {} : TRUE", "FALSE"},
		{"exists with two names", "\\E x, y \\in 1..3 : x + y = 6", "TRUE"},
		{"tuple binder", "\\E <<x, y>> \\in {<<1, 2>>} : x < y", "TRUE"},
		{"LET with operator", "LET sq(x) == x * x\n    y == 3\nIN sq(y) + 1", "10"},
		{"IF", "IF 1 < 2 THEN \"y\" ELSE \"n\"", "\"y\""},
		{"CASE", "CASE 1 = 2 -> \"a\" [] 2 = 2 -> \"b\" [] OTHER -> \"c\"", "\"b\""},
		{"CASE OTHER", "CASE 1 = 2 -> \"a\" [] OTHER -> \"c\"", "\"c\""},
		// model values (TLC's rules: equal only to themselves, comparable with anything)
		{"model value equality", "a = a /\\ a # b", "TRUE"},
		{"model value vs integer", "a = 1", "FALSE"},
		{"model value in set of integers", "a \\in {1, 2}", "FALSE"},
		{"set of model values", "{b, a} = {a, b}", "TRUE"},
		{"Permutations", "Cardinality(Permutations({a, b, c}))", "6"},
		{"Permutations maps model values", "(CHOOSE p \\in Permutations({a, b}) : p[a] = b)[b]", "a"},
		// layout and comments
		{"bullets", "/\\ TRUE\n/\\ \\/ FALSE\n   \\/ TRUE\n/\\ 1 = 1", "TRUE"},
		{"column rule ends an inner list", "/\\ \\/ TRUE\n   \\/ FALSE\n/\\ FALSE", "FALSE"},
		{"infix junction under a bullet", "\\/ FALSE /\\ TRUE\n\\/ 1 = 1", "TRUE"},
		{"nested comments", "1 (* c (* nested *) c *) + 2 \\* tail", "3"},
		{"string escapes", "\"a\\\"b\"", "\"a\\\"b\""},
		{"ToString", "ToString(<<1, a>>)", "\"<<1, a>>\""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := evalExpr(t, tc.src)
			if err != nil {
				t.Fatalf("%s: %v", tc.src, err)
			}
			if got := v.String(); got != tc.want {
				t.Errorf("%s = %s, want %s", tc.src, got, tc.want)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	cases := []struct {
		name, src string
		kind      error
		msg       string
	}{
		{"int plus string", "1 + \"a\"", ErrEval, "must be an integer"},
		{"int equals string", "1 = \"a\"", ErrEval, "attempted to compare"},
		{"outside domain", "<<1>>[2]", ErrEval, "not in the domain"},
		{"missing field", "[a |-> 1].b", ErrEval, "no field b"},
		{"CHOOSE nothing", "CHOOSE x \\in {} : TRUE", ErrEval, "CHOOSE found no value"},
		{"CASE without match", "CASE FALSE -> 1", ErrEval, "no CASE arm"},
		{"Head of empty", "Head(<<>>)", ErrEval, "Head of the empty sequence"},
		{"division by zero", "1 \\div 0", ErrEval, "division by zero"},
		{"infinite set", "Cardinality(Nat)", ErrEval, "cannot enumerate"},
		{"non-boolean condition", "IF 1 THEN 2 ELSE 3", ErrEval, "must be a boolean"},
		{"unknown name", "Undefined + 1", ErrSemantic, "unknown name Undefined"},
		{"wrong arity", "Len(<<1>>, 2)", ErrSemantic, "takes 1 arguments"},
		{"dangling operator", "1 +", ErrParse, "unexpected"},
		{"unclosed paren", "(1", ErrParse, "expected \")\""},
		{"unterminated comment", "1 (* oops", ErrParse, "unterminated comment"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := evalExpr(t, tc.src)
			if !errors.Is(err, tc.kind) {
				t.Fatalf("%s: error %v, want kind %v", tc.src, err, tc.kind)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: error %q does not mention %q", tc.src, err, tc.msg)
			}
		})
	}
}

func TestExtendsScopesOperators(t *testing.T) {
	mod := "---- MODULE T ----\nEXTENDS Naturals\nVARIABLE v\nInit == v = <<>>\nNext == v' = Append(v, 1)\n====\n"
	_, err := LoadSource(mod, "INIT Init\nNEXT Next\n")
	if !errors.Is(err, ErrSemantic) || !strings.Contains(err.Error(), "Sequences") {
		t.Fatalf("Append without EXTENDS Sequences: got %v", err)
	}
}

// A RECURSIVE operator with no base case stops at MaxRecursionDepth with a
// RecursionError that names it and the call, in an expression and in an action.
func TestRecursionWithoutBaseCaseIsAnEvalError(t *testing.T) {
	cases := []struct{ cfg, op, pos string }{
		{"NoBaseCase", "Loop", "9:12"},
		{"NoBaseCase_action", "Step", "12:27"},
	}
	for _, tc := range cases {
		t.Run(tc.cfg, func(t *testing.T) {
			_, err := loadTestdata(t, "NoBaseCase", tc.cfg).Check(Options{})
			var re *RecursionError
			if !errors.As(err, &re) || !errors.Is(err, ErrEval) {
				t.Fatalf("got %v, want a *RecursionError wrapping ErrEval", err)
			}
			if re.Op != tc.op || re.Pos.String() != tc.pos {
				t.Errorf("operator %s at %s, want %s at %s", re.Op, re.Pos, tc.op, tc.pos)
			}
			want := fmt.Sprintf("%s: %v: RECURSIVE operator %s nested more than %d calls deep", tc.pos, ErrEval, tc.op, MaxRecursionDepth)
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q does not say %q", err, want)
			}
		})
	}
}

// A recursion exactly MaxRecursionDepth calls deep is evaluated; one more call is not.
func TestRecursionDepthBoundIsExact(t *testing.T) {
	mod := "---- MODULE Deep ----\nEXTENDS Naturals\nCONSTANT N\nVARIABLE v\n" +
		"RECURSIVE Down(_)\nDown(n) == IF n = 0 THEN 0 ELSE Down(n - 1)\n" +
		"Init == v = 0\nNext == v' = Down(N)\n====\n"
	for _, tc := range []struct {
		calls int // Down(N) makes N+1 nested calls
		fails bool
	}{{MaxRecursionDepth, false}, {MaxRecursionDepth + 1, true}} {
		res, err := loadSource(t, mod, fmt.Sprintf("CONSTANT N = %d\nINIT Init\nNEXT Next\n", tc.calls-1)).Check(Options{})
		var re *RecursionError
		if got := errors.As(err, &re); got != tc.fails {
			t.Errorf("%d nested calls: error %v, want a RecursionError: %v", tc.calls, err, tc.fails)
		}
		if !tc.fails && (err != nil || res.Outcome != OK || res.Distinct != 1) {
			t.Errorf("%d nested calls: %+v, %v", tc.calls, res, err)
		}
	}
}
