package proto_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
)

// TestCursor: a cursor reads back as the place it was made of, for the bounds of
// every part; anything else is refused, another spelling of a valid one included.
func TestCursor(t *testing.T) {
	for _, p := range []core.InboxPos{
		{Since: 1796031595713, Run: "r1", Key: "wire"},
		{Since: 0, Run: "r", Key: "k"},
		{Since: -1, Run: "r", Key: "k"},
		{Since: 1<<62 + 5, Run: core.RunID(strings.Repeat("é", RunBytesMax/2)), Key: core.Key(strings.Repeat("\x00", KeyBytesMax))},
	} {
		c := string(AppendCursor(nil, p))
		if len(c) > CursorBytesMax {
			t.Errorf("%+v: a cursor of %d bytes, over %d", p, len(c), CursorBytesMax)
		}
		got, err := ParseCursor(c)
		if err != nil || got != p {
			t.Errorf("ParseCursor(AppendCursor(%+v)) = %+v, %v", p, got, err)
		}
	}
	enc := func(b ...byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	good := string(AppendCursor(nil, core.InboxPos{Since: 5, Run: "r", Key: "k"}))
	for name, bad := range map[string]string{
		"empty":               "",
		"not base64url":       "a+b/",
		"padded":              good + "=",
		"a line break inside": good[:2] + "\n" + good[2:],
		"no since":            enc(),
		"no run length":       enc(10),
		"an empty run":        enc(10, 0, 'k'),
		"an empty key":        enc(10, 1, 'r'),
		"a run past the end":  enc(10, 5, 'r'),
		"a run too long":      enc(10, 0x81, 0x01),
		"a key not UTF-8":     enc(10, 1, 'r', 0xff),
		"a run not UTF-8":     enc(10, 1, 0xff, 'k'),
		"a varint too long":   enc(0x8a, 0x00, 1, 'r', 'k'),
		"a key too long":      enc(append([]byte{10, 1, 'r'}, make([]byte, KeyBytesMax+1)...)...),
	} {
		if p, err := ParseCursor(bad); err == nil {
			t.Errorf("%s: ParseCursor(%q) = %+v, want an error", name, bad, p)
		}
	}
}

// TestPendingFit: a page is cut to what one line holds, at least one approval, with
// more and the cursor of its last approval; a page that fits is left as it is, and a
// cursor is given only with more.
func TestPendingFit(t *testing.T) {
	approval := func(i int) PendingApproval {
		return PendingApproval{Run: "run", Key: core.Key(strings.Repeat("\x01", 200) + string(rune('a'+i%26))), SinceMs: core.Time(100 + i), AgeMs: 7,
			Description: strings.Repeat("\"", 500)}
	}
	var many []PendingApproval
	for i := range 200 {
		many = append(many, approval(i))
	}
	id := StringID(strings.Repeat("i", IDBytesMax))
	for _, limit := range []int{LineBytesMax, 8 << 10, 3000} {
		r := PendingResult{Approvals: append([]PendingApproval(nil), many...)}
		r.Fit(id, limit)
		line := AppendResult(nil, id, &r)
		if len(line)-1 > limit && len(r.Approvals) > 1 {
			t.Errorf("limit %d: a line of %d bytes", limit, len(line)-1)
		}
		if !r.More || len(r.Approvals) == 0 || len(r.Approvals) == len(many) {
			t.Fatalf("limit %d: %d approvals, more %t", limit, len(r.Approvals), r.More)
		}
		last := r.Approvals[len(r.Approvals)-1]
		if p, err := ParseCursor(r.Cursor); err != nil || p != last.Pos() {
			t.Errorf("limit %d: cursor %q is %+v, %v; want the last approval's place %+v", limit, r.Cursor, p, err, last.Pos())
		}
		// one more approval would not have fitted
		bigger := PendingResult{Approvals: many[:len(r.Approvals)+1], More: true, Cursor: r.Cursor}
		if n := len(AppendResult(nil, id, &bigger)) - 1; n <= limit-200 {
			t.Errorf("limit %d: cut at %d approvals, but %d take only %d bytes", limit, len(r.Approvals), len(bigger.Approvals), n)
		}
	}
	r := PendingResult{Approvals: many[:3]}
	r.Fit(id, LineBytesMax)
	if len(r.Approvals) != 3 || r.More || r.Cursor != "" {
		t.Errorf("a page that fits was changed: %d approvals, more %t, cursor %q", len(r.Approvals), r.More, r.Cursor)
	}
	r = PendingResult{Approvals: many[:3], More: true}
	r.Fit(id, LineBytesMax)
	if len(r.Approvals) != 3 || !r.More || r.Cursor != string(AppendCursor(nil, many[2].Pos())) {
		t.Errorf("a full page from the gate: %d approvals, more %t, cursor %q", len(r.Approvals), r.More, r.Cursor)
	}
	r = PendingResult{Approvals: many[:5]}
	r.Fit(id, 10)
	if len(r.Approvals) != 1 || !r.More {
		t.Errorf("a line too small for one approval keeps one: %d, more %t", len(r.Approvals), r.More)
	}
	empty := PendingResult{}
	empty.Fit(id, LineBytesMax)
	if got := string(AppendResult(nil, IntID(1), &empty)); got != `{"jsonrpc":"2.0","id":1,"result":{"approvals":[],"more":false}}`+"\n" {
		t.Errorf("an empty inbox: %s", got)
	}
}

// TestPendingAndNoteResults: the results with notes read back as they were written,
// the members of what is not known left out.
func TestPendingAndNoteResults(t *testing.T) {
	for _, r := range []Result{
		&PendingResult{Approvals: []PendingApproval{
			{Run: "r1", Key: "k", SinceMs: 5, AgeMs: 3, Description: "d\n<b>", ArgsDigest: "sha256:" + strings.Repeat("a", 64)},
			{Run: "r2", Key: "old"}}, More: true, Cursor: "abc"},
		&StatusResult{Run: "r", Status: core.RunActive, Epoch: 1, Effect: &EffectResult{Key: "k", Status: core.EffectRejected,
			SinceMs: 9, Description: "what", ArgsDigest: "sha512:" + strings.Repeat("b", 128), Reason: "why"}},
	} {
		line := AppendResult(nil, IntID(3), r)
		resp, err := DecodeResponse(line)
		if err != nil {
			t.Fatal(err)
		}
		back := NewResult(map[bool]Method{true: MethodPending, false: MethodStatus}[strings.Contains(string(line), "approvals")])
		if err := back.(interface{ UnmarshalJSON([]byte) error }).UnmarshalJSON(resp.Result); err != nil {
			t.Fatal(err)
		}
		if again := AppendResult(nil, IntID(3), back); string(again) != string(line) {
			t.Errorf("%s\nread back as\n%s", line, again)
		}
	}
	old := PendingResult{Approvals: []PendingApproval{{Run: "r", Key: "k", AgeMs: 99}}}
	if got := string(old.AppendJSON(nil)); got != `{"approvals":[{"run":"r","key":"k"}],"more":false}` {
		t.Errorf("an approval with no time has no age either: %s", got)
	}
}
