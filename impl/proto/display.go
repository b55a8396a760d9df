package proto

import (
	"strconv"
	"unicode/utf8"
)

// Shown is an id a client chose (a run, a key; docs/protocol.md, "Methods") as a
// tool prints it for people: as it is when every character is printable
// (strconv.IsPrint: no control, format, bidirectional, invisible or non-ASCII space
// code point) and none is a space, a quote or a backslash; else Go-quoted, each such
// character escaped. So an id can neither forge a line of the output nor hide itself
// or its neighbours, and two ids never look alike.
func Shown(s string) string {
	if s == "" || !printable(s, false) {
		return strconv.Quote(s)
	}
	return s
}

// ShownText is a message, which may quote such ids, as a tool prints it: as it is
// when every character is printable (spaces included), else Go-quoted whole.
func ShownText(s string) string {
	if !printable(s, true) {
		return strconv.Quote(s)
	}
	return s
}

func printable(s string, text bool) bool {
	if !utf8.ValidString(s) {
		return false // strconv.Quote escapes the bytes that are not UTF-8
	}
	for _, r := range s {
		switch {
		case !strconv.IsPrint(r):
			return false
		case !text && (r == ' ' || r == '"' || r == '\\'):
			return false
		}
	}
	return true
}
