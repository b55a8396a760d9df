package proto_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/prototest"
)

// TestInboxEventLines: each event is one notification line of the documented
// shape, its texts escaped as the answers' are (no raw line break, quote or control
// character survives), and DecodeNotification with InboxEvent.UnmarshalJSON gives
// the event back.
func TestInboxEventLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		ev   InboxEvent
		want string
	}{
		{"pending with its note", InboxEvent{Event: "pending", Run: "demo-1", Key: "wire-money", SinceMs: 1796314765981,
			Description: "Wire 120 EUR", ArgsDigest: prototest.Digest, AtMs: 1796314765981},
			`{"jsonrpc":"2.0","method":"inbox","params":{"event":"pending","run":"demo-1","key":"wire-money","since_ms":1796314765981,"description":"Wire 120 EUR","args_digest":"` + prototest.Digest + `","at_ms":1796314765981}}`},
		{"approved with a reason", InboxEvent{Event: "approved", Run: "r", Key: "k", SinceMs: 5, Reason: "invoice checked", AtMs: 9},
			`{"jsonrpc":"2.0","method":"inbox","params":{"event":"approved","run":"r","key":"k","since_ms":5,"reason":"invoice checked","at_ms":9}}`},
		{"an approval older than notes", InboxEvent{Event: "timed_out", Run: "r", Key: "k", AtMs: 9},
			`{"jsonrpc":"2.0","method":"inbox","params":{"event":"timed_out","run":"r","key":"k","at_ms":9}}`},
		{"lost", InboxEvent{Event: EventLost, AtMs: 7},
			`{"jsonrpc":"2.0","method":"inbox","params":{"event":"lost","at_ms":7}}`},
		{"agent-chosen texts", InboxEvent{Event: "pending", Run: "r\n1", Key: "k\"\x1b[31m", Description: "line 1\nline 2\t\"quoted\" \\ \u202e", AtMs: 1},
			`{"jsonrpc":"2.0","method":"inbox","params":{"event":"pending","run":"r\n1","key":"k\"\u001b[31m","description":"line 1\nline 2\t\"quoted\" \\ ` + "\u202e" + `","at_ms":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := AppendInboxEvent(nil, &tc.ev)
			if got := string(line); got != tc.want+"\n" {
				t.Fatalf("line\n %s\nwant\n %s", got, tc.want)
			}
			if bytes.Count(line, []byte("\n")) != 1 || bytes.ContainsAny(line[:len(line)-1], "\r\x1b\t") {
				t.Fatalf("a raw line break or control character in %q", line)
			}
			method, params, err := DecodeNotification(line)
			if err != nil || method != NotificationInbox {
				t.Fatalf("DecodeNotification = %q, %v", method, err)
			}
			var back InboxEvent
			if err := back.UnmarshalJSON(params); err != nil || back != tc.ev {
				t.Fatalf("read back %+v, %v; want %+v", back, err, tc.ev)
			}
		})
	}
}

// TestInboxEventLineBound: the longest notification the wire's limits allow, every
// byte of run and key escaped to six, fits in a request line: no notification is
// longer than a line a client must read anyway.
func TestInboxEventLineBound(t *testing.T) {
	ev := InboxEvent{Event: "timed_out", Run: core.RunID(strings.Repeat("\x01", RunBytesMax)), Key: core.Key(strings.Repeat("\x01", KeyBytesMax)),
		SinceMs: IntMax, Description: strings.Repeat("\n", DescriptionBytesMax), ArgsDigest: "sha512:" + strings.Repeat("ab", 64),
		Reason: strings.Repeat("\"", ReasonBytesMax), AtMs: IntMax}
	line := AppendInboxEvent(nil, &ev)
	if n := len(line) - 1; n > LineBytesMax || n < 6*(RunBytesMax+KeyBytesMax) {
		t.Fatalf("the longest notification is %d bytes, want at most %d (and every byte of run and key escaped)", n, LineBytesMax)
	}
}

// TestDecodeNotificationRefuses: an answer (it has an id, null included) is not a
// notification, and a line that is not a well-formed notification is an error.
func TestDecodeNotificationRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		notOne     bool // ErrNotNotification, not another error
	}{
		{"an answer", `{"jsonrpc":"2.0","id":1,"result":{"watching":true}}`, true},
		{"an error with id null", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":{"type":"parse_error"}}}`, true},
		{"a request", `{"jsonrpc":"2.0","id":1,"method":"watch","params":{}}`, true},
		{"no method", `{"jsonrpc":"2.0","params":{}}`, true},
		{"not JSON", `inbox`, false},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","method":"inbox","params":{"event":"lost","at_ms":1}}`, false},
		{"no params", `{"jsonrpc":"2.0","method":"inbox"}`, false},
	} {
		_, _, err := DecodeNotification([]byte(tc.line))
		if err == nil || errors.Is(err, ErrNotNotification) != tc.notOne {
			t.Errorf("%s: DecodeNotification(%s) = %v, want ErrNotNotification %v", tc.name, tc.line, err, tc.notOne)
		}
	}
	for _, params := range []string{`{}`, `{"event":""}`, `[]`, `{"event":5}`} {
		var ev InboxEvent
		if err := ev.UnmarshalJSON([]byte(params)); err == nil {
			t.Errorf("UnmarshalJSON(%s) = nil, want an error", params)
		}
	}
	var ev InboxEvent
	if err := ev.UnmarshalJSON([]byte(`{"event":"archived","run":"r","key":"k","at_ms":3,"by":"x"}`)); err != nil || ev.Event != "archived" {
		t.Errorf("an event of a later version: %+v, %v; want it kept, members it does not know ignored", ev, err)
	}
}

// TestWatchResults: watch and unwatch answer {"watching":true} and
// {"watching":false}, read back as written.
func TestWatchResults(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{&WatchResult{Watching: true}, `{"jsonrpc":"2.0","id":3,"result":{"watching":true}}`},
		{&UnwatchResult{}, `{"jsonrpc":"2.0","id":3,"result":{"watching":false}}`},
	} {
		line := AppendResult(nil, IntID(3), tc.r)
		if string(line) != tc.want+"\n" {
			t.Fatalf("%T: %s, want %s", tc.r, line, tc.want)
		}
		resp, err := DecodeResponse(line)
		if err != nil {
			t.Fatal(err)
		}
		var w, u = &WatchResult{}, &UnwatchResult{Watching: true}
		if err := json.Unmarshal(resp.Result, w); err != nil || w.Watching != strings.Contains(tc.want, "true") {
			t.Fatalf("%s read as %+v, %v", resp.Result, w, err)
		}
		if err := json.Unmarshal(resp.Result, u); err != nil || u.Watching != w.Watching {
			t.Fatalf("%s read as %+v, %v", resp.Result, u, err)
		}
	}
}
