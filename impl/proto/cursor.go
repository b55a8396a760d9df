package proto

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/core"
)

// A cursor is a place in the inbox's order (core.InboxPos), as a pending answer
// gives it for its next page and a pending request gives it back: opaque to the
// client, printable, safe in a shell word. It is base64url (no padding) of
//
//	+----------------+--------------------+-----+-----+
//	| since (varint) | len(run) (uvarint) | run | key |
//	+----------------+--------------------+-----+-----+
//
// with the run of 1..RunBytesMax and the key of 1..KeyBytesMax bytes of UTF-8.

// errCursor is why a cursor is out of range.
var errCursor = errors.New("not a cursor a pending answer gave")

// AppendCursor appends the cursor of p to dst.
func AppendCursor(dst []byte, p core.InboxPos) []byte {
	var raw [binary.MaxVarintLen64 + binary.MaxVarintLen64 + RunBytesMax + KeyBytesMax]byte
	b := binary.AppendVarint(raw[:0], int64(p.Since))
	b = binary.AppendUvarint(b, uint64(len(p.Run)))
	b = append(append(b, p.Run...), p.Key...)
	return base64.RawURLEncoding.AppendEncode(dst, b)
}

// ParseCursor reads a cursor made by AppendCursor.
func ParseCursor(s string) (core.InboxPos, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return core.InboxPos{}, errCursor
	}
	since, n := binary.Varint(b)
	if n <= 0 {
		return core.InboxPos{}, errCursor
	}
	b = b[n:]
	runLen, n := binary.Uvarint(b)
	if n <= 0 || runLen < 1 || runLen > RunBytesMax || uint64(len(b)-n) < runLen {
		return core.InboxPos{}, errCursor
	}
	run, key := b[n:n+int(runLen)], b[n+int(runLen):]
	if len(key) < 1 || len(key) > KeyBytesMax || !utf8.Valid(run) || !utf8.Valid(key) {
		return core.InboxPos{}, errCursor
	}
	p := core.InboxPos{Since: core.Time(since), Run: core.RunID(run), Key: core.Key(key)}
	if string(AppendCursor(nil, p)) != s {
		return core.InboxPos{}, errCursor // one cursor per place: no other spelling of it
	}
	return p, nil
}
