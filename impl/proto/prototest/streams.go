package prototest

import (
	"strings"

	"github.com/soundgate/soundgate/impl/proto"
)

// StreamCase is a byte stream and what a proto.Reader with line limit Limit gives for
// it: each line in order, "!line_too_long" for an oversize one.
type StreamCase struct {
	Name  string
	In    string
	Limit int
	Want  []string
}

// TooLong stands for an ErrLineTooLong in StreamCase.Want.
const TooLong = "!line_too_long"

var long = strings.Repeat("x", proto.LineBytesMax)

// Streams are the Reader's cases: terminators, blank lines, a last line without LF,
// and lines at and over the limit, at the protocol's limit and at small ones. (The
// Reader's test adds 10 MB lines, too large for a seed file.)
var Streams = []StreamCase{
	{"LF", "a\nb\n", proto.LineBytesMax, []string{"a", "b"}},
	{"CRLF", "a\r\nb\r\n", proto.LineBytesMax, []string{"a", "b"}},
	{"mixed", "a\r\nb\nc\r\n", proto.LineBytesMax, []string{"a", "b", "c"}},
	{"last line without LF", "a\nb", proto.LineBytesMax, []string{"a", "b"}},
	{"last line CR without LF", "a\nb\r", proto.LineBytesMax, []string{"a", "b"}},
	{"blank lines skipped", "\n\r\n  \t\na\n \n", proto.LineBytesMax, []string{"a"}},
	{"CR inside a line kept", "a\rb\n", proto.LineBytesMax, []string{"a\rb"}},
	{"at the limit", long + "\n", proto.LineBytesMax, []string{long}},
	{"at the limit CRLF", long + "\r\n", proto.LineBytesMax, []string{long}},
	{"one over the limit", long + "x\nok\n", proto.LineBytesMax, []string{TooLong, "ok"}},
	{"one over the limit CRLF", long + "x\r\nok\n", proto.LineBytesMax, []string{TooLong, "ok"}},
	{"over the limit at EOF", long + "x", proto.LineBytesMax, []string{TooLong}},
	{"lines around a long one", "a\n" + long + "zz\nb\n", proto.LineBytesMax, []string{"a", TooLong, "b"}},
	{"empty", "", proto.LineBytesMax, nil},
	{"small limit", "abcd\nabcde\nab\r\n", 4, []string{"abcd", TooLong, "ab"}},
	{"small limit CRLF", "abcd\r\nabcde\r\n", 4, []string{"abcd", TooLong}},
	{"limit 1", "a\nbb\n\nc", 1, []string{"a", TooLong, "c"}},
}
