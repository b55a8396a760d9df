package core

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Note is what an approval says to the person who decides it, and what the decision
// said back. None of it changes a decision: no action reads a note to choose its
// answer or its next state, and the spec and the model have no notes
// (docs/contract.md, "What an approval says"). The gate keeps it with the effect
// whose gated admit opened the approval, from then on (held, released, admitted,
// completed or rejected) until the effect drops back to absent, in the log (the
// Command) and in the snapshot.
//
// A stored Note is never changed: a decision that adds its reason stores a new one,
// so that a cut (cut.go) that saved the effect keeps the note it saw.
type Note struct {
	// Since is when the approval became pending: the Now of the admit that opened it,
	// on the gate's clock. 0: not known (an approval restored from a snapshot written
	// before notes were kept).
	Since Time
	// Description says what the effect would do, for the approver: at most
	// DescriptionBytesMax bytes of UTF-8 (CheckNoteText). "": none.
	Description string
	// ArgsDigest is a digest of the effect's arguments (CheckArgsDigest). "": none.
	ArgsDigest string
	// Reason is the decider's reason, once decided (ReasonBytesMax). "": none.
	Reason string
}

// The bounds of a note's texts, in bytes of UTF-8.
const (
	DescriptionBytesMax = 512
	ReasonBytesMax      = 512
	// ByBytesMax bounds Command.By, a token's name (the roles file refuses longer).
	ByBytesMax = 128
	// noteOverheadBytes is what the state's budget counts of a Note besides its
	// texts (budget.go).
	noteOverheadBytes = 64
)

// argsDigests are the args digests the gate accepts: an algorithm's name, a colon
// and the digest in lower-case hexadecimal, of the algorithm's length.
var argsDigests = [...]struct {
	alg string
	hex int
}{{"sha256", 64}, {"sha512", 128}}

// CheckNoteText reports why s cannot be a description or a reason of at most
// maxBytes bytes, or nil when it can: it must be UTF-8, and hold no control
// character (Unicode's Cc: U+0000-U+001F, U+007F-U+009F) other than tab and line
// feed. Other characters are allowed; what shows them to people escapes what is not
// printable (proto.ShownText).
func CheckNoteText(s string, maxBytes int) error {
	if len(s) > maxBytes {
		return fmt.Errorf("%d bytes, over the limit of %d", len(s), maxBytes)
	}
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !validRuneAt(s, i):
			return fmt.Errorf("not UTF-8 at byte %d", i)
		case r != '\t' && r != '\n' && unicode.IsControl(r):
			return fmt.Errorf("control character %U at byte %d", r, i)
		}
	}
	return nil
}

// validRuneAt reports whether s holds a valid encoding at byte i (U+FFFD itself is
// valid; a byte that is not UTF-8 decodes to it too).
func validRuneAt(s string, i int) bool {
	_, n := utf8.DecodeRuneInString(s[i:])
	return n > 1
}

// CheckArgsDigest reports why s cannot be an args digest, or nil when it can:
// "sha256:" and 64 lower-case hexadecimal digits, or "sha512:" and 128.
func CheckArgsDigest(s string) error {
	for _, d := range argsDigests {
		if alg := d.alg; len(s) == len(alg)+1+d.hex && s[:len(alg)] == alg && s[len(alg)] == ':' {
			for i := len(alg) + 1; i < len(s); i++ {
				if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
					return fmt.Errorf("not a lower-case hexadecimal digit at byte %d", i)
				}
			}
			return nil
		}
	}
	return errNotDigest
}

var errNotDigest = errors.New(`not "sha256:" and 64 lower-case hexadecimal digits, nor "sha512:" and 128`)

// checkNote refuses the notes a command cannot carry: a description or an args
// digest on anything but an admit, a reason or a by on anything but a decide, a
// cancel or a fence, or one that fails its check. The refusal is ErrInvalid, saying
// which.
func (c *Command) checkNote() error {
	if c.Description == "" && c.ArgsDigest == "" && c.Reason == "" && c.By == "" {
		return nil
	}
	byOperator := []Op{OpDecide, OpCancel, OpFence}
	for _, f := range [...]struct {
		name, v string
		ops     []Op
		check   func(string) error
	}{
		{"description", c.Description, []Op{OpAdmit}, func(s string) error { return CheckNoteText(s, DescriptionBytesMax) }},
		{"args_digest", c.ArgsDigest, []Op{OpAdmit}, CheckArgsDigest},
		{"reason", c.Reason, byOperator, func(s string) error { return CheckNoteText(s, ReasonBytesMax) }},
		{"by", c.By, byOperator, CheckBy},
	} {
		if f.v == "" {
			continue
		}
		err := f.check(f.v)
		if !slices.Contains(f.ops, c.Op) {
			err = fmt.Errorf("only %v carry one, not %s", f.ops, c.Op)
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrInvalid, f.name, err)
		}
	}
	return nil
}

// CheckBy reports why s cannot be a Command.By (a token's name), or nil: at most
// ByBytesMax bytes of UTF-8 and no control character at all, not even a tab or a
// line feed (it is shown on one line).
func CheckBy(s string) error {
	if err := CheckNoteText(s, ByBytesMax); err != nil {
		return err
	}
	if i := strings.IndexAny(s, "\t\n"); i >= 0 {
		return fmt.Errorf("control character %U at byte %d", rune(s[i]), i)
	}
	return nil
}

// openNote is the note of the approval an admit opens: its description and digest,
// pending since its time.
func (c *Command) openNote() Note {
	return Note{Since: c.Now, Description: c.Description, ArgsDigest: c.ArgsDigest}
}

// decided returns n with the decision's reason: n itself when there is none, else
// a new Note (a stored one is never changed).
func (n *Note) decided(reason string) *Note {
	if reason == "" {
		return n
	}
	var m Note
	if n != nil {
		m = *n
	}
	m.Reason = reason
	return &m
}

// bytes is what the state's budget counts of n (nil: nothing).
func (n *Note) bytes() int64 {
	if n == nil {
		return 0
	}
	return int64(noteOverheadBytes + len(n.Description) + len(n.ArgsDigest) + len(n.Reason))
}

// check reports why n cannot be stored (a note restored from a snapshot is checked
// as a command's is), or nil.
func (n *Note) check() error {
	if n == nil {
		return nil
	}
	if err := CheckNoteText(n.Description, DescriptionBytesMax); err != nil {
		return fmt.Errorf("description: %v", err)
	}
	if n.ArgsDigest != "" {
		if err := CheckArgsDigest(n.ArgsDigest); err != nil {
			return fmt.Errorf("args_digest: %v", err)
		}
	}
	if err := CheckNoteText(n.Reason, ReasonBytesMax); err != nil {
		return fmt.Errorf("reason: %v", err)
	}
	return nil
}
