package tlacheck

import (
	"strings"
)

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tNum
	tStr
	tOp   // operators and punctuation
	tKw   // reserved words
	tSep  // ---- separator lines
	tEnd  // ==== end of module
	tFair // WF_ or SF_
)

type token struct {
	kind tokKind
	text string
	pos  Pos
}

var keywords = map[string]bool{
	"ASSUME": true, "ASSUMPTION": true, "AXIOM": true, "BOOLEAN": true, "CASE": true,
	"CHOOSE": true, "CONSTANT": true, "CONSTANTS": true, "DOMAIN": true, "ELSE": true,
	"ENABLED": true, "EXCEPT": true, "EXTENDS": true, "FALSE": true, "IF": true,
	"IN": true, "INSTANCE": true, "LET": true, "LOCAL": true, "MODULE": true,
	"OTHER": true, "STRING": true, "SUBSET": true, "THEN": true, "THEOREM": true,
	"TRUE": true, "UNCHANGED": true, "UNION": true, "VARIABLE": true, "VARIABLES": true,
	"WITH": true, "LAMBDA": true, "RECURSIVE": true, "LEMMA": true, "PROPOSITION": true,
	"COROLLARY": true, "PROOF": true, "BY": true, "OBVIOUS": true, "OMITTED": true,
	"QED": true, "USE": true, "HIDE": true, "DEFINE": true, "DEFS": true, "SF_": true,
	"WF_": true, "PICK": true, "HAVE": true, "TAKE": true, "WITNESS": true,
	"SUFFICES": true, "ACTION": true, "STATE": true, "TEMPORAL": true, "NEW": true,
	"CONSTANTS_": false,
}

// Operator and punctuation spellings, longest first within a shared prefix.
var punct = []string{
	"-+->", "<=>", "|->", "...", "]_", ">>_", "==", "=>", "=<", "<=", ">=", "/=", "/\\", "\\/",
	"<<", ">>", "<-", "->", ":>", "@@", "..", "::", "~>", "[]", "<>", "++", "**", "||",
	"=", "#", "<", ">", "(", ")", "[", "]", "{", "}", ",", ":", "'", "!", ".", "@",
	"+", "-", "*", "/", "%", "^", "~", "|", "&", "$", "?", ";", "_",
}

// backslash words: \in, \cup, ... ; a lone backslash is set difference.
var bsWords = map[string]bool{
	"in": true, "notin": true, "cup": true, "cap": true, "union": true, "intersect": true,
	"subseteq": true, "subset": true, "supseteq": true, "supset": true, "div": true,
	"o": true, "circ": true, "X": true, "times": true, "A": true, "E": true, "AA": true,
	"EE": true, "lnot": true, "neg": true, "land": true, "lor": true, "equiv": true,
	"leq": true, "geq": true, "prec": true, "preceq": true, "succ": true, "succeq": true,
	"sqsubset": true, "sqsubseteq": true, "sqsupset": true, "sqsupseteq": true,
	"sqcap": true, "sqcup": true, "oplus": true, "ominus": true, "otimes": true,
	"oslash": true, "odot": true, "uplus": true, "cdot": true, "bullet": true,
	"star": true, "bigcirc": true, "sim": true, "simeq": true, "asymp": true,
	"approx": true, "cong": true, "doteq": true, "propto": true, "wr": true,
	"ll": true, "gg": true, "mid": true, "models": true,
}

type lexer struct {
	src  string
	i    int
	line int
	col  int
	toks []token
}

func lex(src string) ([]token, error) {
	lx := &lexer{src: src, line: 1, col: 1}
	for {
		if err := lx.skipSpace(); err != nil {
			return nil, err
		}
		if lx.i >= len(lx.src) {
			lx.toks = append(lx.toks, token{kind: tEOF, pos: Pos{lx.line, lx.col}})
			return lx.toks, nil
		}
		if err := lx.next(); err != nil {
			return nil, err
		}
	}
}

func (lx *lexer) advance(n int) {
	for k := 0; k < n && lx.i < len(lx.src); k++ {
		if lx.src[lx.i] == '\n' {
			lx.line++
			lx.col = 1
		} else {
			lx.col++
		}
		lx.i++
	}
}

func (lx *lexer) skipSpace() error {
	for lx.i < len(lx.src) {
		c := lx.src[lx.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			lx.advance(1)
		case strings.HasPrefix(lx.src[lx.i:], "\\*"):
			for lx.i < len(lx.src) && lx.src[lx.i] != '\n' {
				lx.advance(1)
			}
		case strings.HasPrefix(lx.src[lx.i:], "(*"):
			start := Pos{lx.line, lx.col}
			depth := 0
			for {
				if lx.i >= len(lx.src) {
					return errAt(ErrParse, start, "unterminated comment (* ... *)")
				}
				if strings.HasPrefix(lx.src[lx.i:], "(*") {
					depth++
					lx.advance(2)
					continue
				}
				if strings.HasPrefix(lx.src[lx.i:], "*)") {
					depth--
					lx.advance(2)
					if depth == 0 {
						break
					}
					continue
				}
				lx.advance(1)
			}
		default:
			return nil
		}
	}
	return nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool  { return c >= '0' && c <= '9' }

func (lx *lexer) emit(k tokKind, text string, p Pos) {
	lx.toks = append(lx.toks, token{kind: k, text: text, pos: p})
}

// next lexes one token at lx.i (which is not blank).
func (lx *lexer) next() error {
	p := Pos{lx.line, lx.col}
	rest := lx.src[lx.i:]
	c := rest[0]
	switch {
	case strings.HasPrefix(rest, "----"):
		lx.rule(rest, '-', tSep, p)
		return nil
	case strings.HasPrefix(rest, "===="):
		lx.rule(rest, '=', tEnd, p)
		return nil
	case isLetter(c) || isDigit(c):
		lx.word(rest, p)
		return nil
	case c == '"':
		return lx.str(rest, p)
	case c == '\\':
		return lx.backslash(rest, p)
	}
	for _, s := range punct {
		if strings.HasPrefix(rest, s) {
			// "]_" only when followed by a subscript; "[]" is the box operator.
			lx.advance(len(s))
			lx.emit(tOp, s, p)
			return nil
		}
	}
	return errAt(ErrParse, p, "unexpected character %q", c)
}

// rule lexes a separator (----...) or end (====...) line of any length as one
// token whose text is its first four characters.
func (lx *lexer) rule(rest string, ch byte, kind tokKind, p Pos) {
	n := 0
	for n < len(rest) && rest[n] == ch {
		n++
	}
	lx.advance(n)
	lx.emit(kind, rest[:4], p)
}

// word lexes a run of letters and digits: a number, a keyword, an identifier, or
// the WF_/SF_ prefix of a fairness subscript.
func (lx *lexer) word(rest string, p Pos) {
	n := 0
	for n < len(rest) && (isLetter(rest[n]) || isDigit(rest[n])) {
		n++
	}
	word := rest[:n]
	if strings.HasPrefix(word, "WF_") || strings.HasPrefix(word, "SF_") {
		lx.advance(3)
		lx.emit(tFair, word[:3], p)
		return
	}
	allDigits := true
	for i := 0; i < n; i++ {
		if !isDigit(word[i]) {
			allDigits = false
			break
		}
	}
	lx.advance(n)
	switch {
	case allDigits:
		lx.emit(tNum, word, p)
	case keywords[word]:
		lx.emit(tKw, word, p)
	default:
		lx.emit(tIdent, word, p)
	}
}

// str lexes a string literal, decoding its escapes.
func (lx *lexer) str(rest string, p Pos) error {
	var b strings.Builder
	j := 1
	for {
		if j >= len(rest) || rest[j] == '\n' {
			return errAt(ErrParse, p, "unterminated string literal")
		}
		if rest[j] == '"' {
			j++
			break
		}
		if rest[j] == '\\' && j+1 < len(rest) {
			switch rest[j+1] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'f':
				b.WriteByte('\f')
			case '"', '\\':
				b.WriteByte(rest[j+1])
			default:
				return errAt(ErrParse, p, "unknown escape \\%c in string", rest[j+1])
			}
			j += 2
			continue
		}
		b.WriteByte(rest[j])
		j++
	}
	lx.advance(j)
	lx.emit(tStr, b.String(), p)
	return nil
}

// backslash lexes \/, a backslash word (\in, \cup, ...) or a lone backslash (set
// difference); \* comments are skipped before.
func (lx *lexer) backslash(rest string, p Pos) error {
	if strings.HasPrefix(rest, "\\/") {
		lx.advance(2)
		lx.emit(tOp, "\\/", p)
		return nil
	}
	n := 1
	for n < len(rest) && (isLetter(rest[n]) || isDigit(rest[n])) {
		n++
	}
	w := rest[1:n]
	if w == "" {
		lx.advance(1)
		lx.emit(tOp, "\\", p)
		return nil
	}
	if !bsWords[w] {
		if len(w) > 0 && (w[0] == 'b' || w[0] == 'o' || w[0] == 'h') && len(w) > 1 {
			return errAt(ErrUnsupported, p, "number literal \\%s (binary/octal/hex) is not supported", w)
		}
		return errAt(ErrParse, p, "unknown operator \\%s", w)
	}
	lx.advance(n)
	lx.emit(tOp, "\\"+w, p)
	return nil
}
