package proto_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	. "github.com/soundgate/soundgate/impl/proto"
)

// Every error of the core has a distinct wire code in the documented range, and every
// wire type is distinct: a client can switch on either.
func TestErrorCodesComplete(t *testing.T) {
	codes := map[int]string{}
	types := map[string]bool{}
	for _, e := range core.Errors {
		c, ok := CoreCode(e.Code)
		if !ok {
			t.Errorf("core error %q has no wire code", e.Code)
			continue
		}
		if c > CodeCoreFirst || c < CodeCoreLast {
			t.Errorf("core error %q has code %d outside %d..%d", e.Code, c, CodeCoreFirst, CodeCoreLast)
		}
		if other, dup := codes[c]; dup {
			t.Errorf("code %d given to %q and %q", c, other, e.Code)
		}
		codes[c] = e.Code
		types[e.Code] = true
	}
	for _, e := range append(append([]*Error{}, DecodeErrors...), ServerErrors...) {
		if types[e.Type] {
			t.Errorf("type %q is used twice", e.Type)
		}
		types[e.Type] = true
	}
}

func TestErrorAnswers(t *testing.T) {
	wrapped := errors.Join(errors.New("context"), core.ErrBadEpoch)
	cases := []struct {
		err  error
		code int
		typ  string
	}{
		{ErrForbidden, CodeForbidden, "forbidden"},
		{core.ErrUnknownRun, -32010, "unknown_run"},
		{wrapped, -32011, "bad_epoch"},
		{errors.New("disk on fire"), CodeInternal, "internal"},
		{&DecodeError{Err: ErrWrongType, ID: IntID(3), Field: "params.epoch", Offset: 9}, CodeInvalidParams, "wrong_type"},
	}
	for _, tc := range cases {
		line := AppendError(nil, StringID("q"), tc.err)
		resp, err := DecodeResponse(line)
		if err != nil || resp.Error == nil || resp.Result != nil || resp.ID != StringID("q") {
			t.Fatalf("DecodeResponse(%s) = %+v, %v", line, resp, err)
		}
		if resp.Error.Code != tc.code || resp.Error.Type != tc.typ {
			t.Fatalf("%v: answered %+v, want code %d type %s", tc.err, resp.Error, tc.code, tc.typ)
		}
		if tc.typ != "internal" && !errors.Is(resp.Error.Err(), tc.err) && !errors.Is(tc.err, resp.Error.Err()) {
			t.Fatalf("%v: the error read back (%v) does not match it", tc.err, resp.Error.Err())
		}
	}
	if line := AppendError(nil, ID{}, ErrParse); !strings.HasPrefix(string(line), `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,`) {
		t.Fatalf("null id error answer: %s", line)
	}
}

// TestErrorIsMatchesType: errors.Is matches a protocol *Error by its data.type, not by
// identity (doc of Error.Is): an error built from an answer of a later version, whose
// type this package does not know, matches another read of the same type, and a copy
// of a sentinel matches the sentinel; different types never match.
func TestErrorIsMatchesType(t *testing.T) {
	later := ErrorObject{Code: -32050, Type: "quota_exceeded", Message: "quota exceeded"}
	a, b := later.Err(), later.Err()
	if !errors.Is(a, b) || !errors.Is(fmt.Errorf("call: %w", a), b) {
		t.Errorf("two reads of an unknown type %q do not match", later.Type)
	}
	if errors.Is(a, ErrInternal) || errors.Is(a, ErrForbidden) {
		t.Errorf("an unknown type matches a sentinel of another type")
	}
	copied := *ErrOverloaded
	if !errors.Is(&copied, ErrOverloaded) || errors.Is(&copied, ErrShuttingDown) {
		t.Errorf("a copy of ErrOverloaded: Is(ErrOverloaded) %v, Is(ErrShuttingDown) %v",
			errors.Is(&copied, ErrOverloaded), errors.Is(&copied, ErrShuttingDown))
	}
	if !errors.Is(&Error{Code: CodeForbidden, Type: "forbidden"}, ErrForbidden) {
		t.Errorf("an *Error of type forbidden does not match ErrForbidden")
	}
	if errors.Is(&Error{Code: CodeForbidden, Type: "forbidden"}, errors.New("forbidden")) {
		t.Errorf("an *Error matches an error that is not an *Error")
	}
}
