package fuzz

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"testing"
	"testing/iotest"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/protoref"
)

// checkDecoded holds the decoder's contract for one line and its result.
func checkDecoded(t *testing.T, line []byte, req proto.Request, err error) {
	t.Helper()
	if err == nil {
		if verr := req.Validate(); verr != nil {
			t.Fatalf("accepted %q as %+v, which does not validate: %v", line, req, verr)
		}
		enc := proto.AppendRequest(nil, &req)
		again, err2 := proto.Decode(enc)
		if err2 != nil || again != req {
			t.Fatalf("accepted %q as %+v; its encoding %q decodes to %+v, %v", line, req, enc, again, err2)
		}
		return
	}
	var de *proto.DecodeError
	if !errors.As(err, &de) {
		t.Fatalf("%q: error %T %v is not a *proto.DecodeError", line, err, err)
	}
	matches := 0
	for _, kind := range proto.DecodeErrors {
		if errors.Is(err, kind) {
			matches++
		}
	}
	if matches != 1 {
		t.Fatalf("%q: error %v matches %d decoding errors, want exactly 1", line, err, matches)
	}
	if (req != proto.Request{ID: de.ID}) {
		t.Fatalf("%q: failed decode left %+v (error id %v)", line, req, de.ID)
	}
	if de.ID.Kind != proto.IDNull {
		if ve := (&proto.Request{ID: de.ID, Method: proto.MethodCancel, Run: "r"}).Validate(); ve != nil {
			t.Fatalf("%q: recovered an invalid id %v: %v", line, de.ID, ve)
		}
	}
	answer := proto.AppendError(nil, de.ID, err)
	resp, rerr := proto.DecodeResponse(answer)
	if rerr != nil || resp.ID != de.ID || resp.Error == nil || resp.Error.Type != de.Err.Type || resp.Error.Code != de.Err.Code {
		t.Fatalf("%q: error answer %q reads back as %+v, %v", line, answer, resp, rerr)
	}
	if !bytes.HasSuffix(answer, []byte("\n")) || bytes.Count(answer, []byte("\n")) != 1 {
		t.Fatalf("%q: error answer is not one line: %q", line, answer)
	}
}

func FuzzDecode(f *testing.F) {
	var d proto.Decoder // reused across inputs, as a connection reuses it
	f.Fuzz(func(t *testing.T, line []byte) {
		var req proto.Request
		err := d.Decode(line, &req)
		checkDecoded(t, line, req, err)
		if sampled(line) {
			var fresh proto.Decoder
			var r2 proto.Request
			var err2 error
			checkBudget(t, "Decode", len(line), func() { err2 = fresh.Decode(line, &r2) })
			if r2 != req || errors.Is(err, proto.ErrParse) != errors.Is(err2, proto.ErrParse) || (err == nil) != (err2 == nil) {
				t.Fatalf("%q: a fresh decoder disagrees with a reused one: %+v, %v vs %+v, %v", line, r2, err2, req, err)
			}
		}
	})
}

func FuzzDifferential(f *testing.F) {
	var d proto.Decoder
	f.Fuzz(func(t *testing.T, line []byte) {
		var got proto.Request
		err := d.Decode(line, &got)
		want, werr := protoref.Decode(line)
		if (err == nil) != (werr == nil) {
			t.Fatalf("%q: decoder says %v, reference says %v", line, err, werr)
		}
		if got != want {
			t.Fatalf("%q: decoder gives\n %+v\nreference gives\n %+v", line, got, want)
		}
		if err != nil {
			var a, b *proto.DecodeError
			if !errors.As(err, &a) || !errors.As(werr, &b) {
				t.Fatalf("%q: errors %T, %T are not *proto.DecodeError", line, err, werr)
			}
			if a.Err != b.Err || a.ID != b.ID || a.Field != b.Field {
				t.Fatalf("%q: decoder error %v (id %v field %q), reference error %v (id %v field %q)",
					line, a.Err.Type, a.ID, a.Field, b.Err.Type, b.ID, b.Field)
			}
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Fuzz(func(t *testing.T, method uint8, idKind uint8, idInt int64, idStr string,
		run, key string, epoch uint64, gated bool, waitMs, timeoutMs int64,
		choice uint8, result, token string, version int64) {
		req := buildRequest(method, idKind, idInt, idStr, run, key, epoch, gated, waitMs, timeoutMs, choice, result, token, version)
		line := proto.AppendRequest(nil, &req) // never panics, valid or not
		if err := req.Validate(); err != nil {
			if !json.Valid(line) {
				t.Fatalf("AppendRequest of an invalid request wrote invalid JSON %q", line)
			}
			return
		}
		got, err := proto.Decode(line)
		if err != nil || got != req {
			t.Fatalf("decode(encode(%+v)) = %+v, %v\nline %q", req, got, err, line)
		}
		ref, err := protoref.Decode(line)
		if err != nil || ref != req {
			t.Fatalf("reference decode(encode(%+v)) = %+v, %v\nline %q", req, ref, err, line)
		}
	})
}

// buildRequest makes a request of the chosen method from the fuzzer's values, keeping
// only the method's fields and folding numbers into their ranges, so that most inputs
// are valid requests (strings may still be too long or not UTF-8: those are skipped).
// choice's bit 1 adds a note's text (result as an admit's description or a decide's
// reason) or a pending request's cursor (of run, key and timeoutMs as the time), its
// bit 2 an admit's args digest (of token).
func buildRequest(method uint8, idKind uint8, idInt int64, idStr string,
	run, key string, epoch uint64, gated bool, waitMs, timeoutMs int64,
	choice uint8, result, token string, version int64) proto.Request {
	req := proto.Request{Method: proto.Methods[int(method)%len(proto.Methods)]}
	if idKind%2 == 0 {
		req.ID = proto.IntID(idInt % (proto.IntMax + 1))
	} else {
		req.ID = proto.StringID(idStr)
	}
	fold := func(v, lo, hi int64) int64 {
		if v < 0 {
			v = -(v + 1)
		}
		return lo + v%(hi-lo+1)
	}
	switch req.Method {
	case proto.MethodHello:
		req.Version, req.Token = fold(version, 1, proto.IntMax), token
	case proto.MethodOpen:
		req.Run = core.RunID(run)
		if timeoutMs != 0 {
			req.TimeoutMs = fold(timeoutMs, 1, proto.TimeoutMsMax)
		}
	case proto.MethodAdmit:
		req.Run, req.Key, req.Gated = core.RunID(run), core.Key(key), gated
		req.Epoch = 1 + epoch%proto.IntMax
		req.WaitMs = fold(waitMs, 0, proto.WaitMsMax)
		if choice&2 != 0 {
			req.Description = result
		}
		if choice&4 != 0 {
			sum := sha256.Sum256([]byte(token))
			req.ArgsDigest = "sha256:" + hex.EncodeToString(sum[:])
		}
	case proto.MethodDecide:
		req.Run, req.Key = core.RunID(run), core.Key(key)
		req.Decision = core.Approve + core.Decision(choice%2)
		if choice&2 != 0 {
			req.Reason = result
		}
	case proto.MethodComplete:
		req.Run, req.Key, req.Result = core.RunID(run), core.Key(key), result
		req.Outcome = core.OutcomeOK + core.Outcome(choice%2)
	case proto.MethodCancel, proto.MethodFence:
		req.Run = core.RunID(run)
	case proto.MethodStatus:
		req.Run, req.Key = core.RunID(run), core.Key(key)
	case proto.MethodPending:
		if waitMs != 0 {
			req.Limit = fold(waitMs, 1, proto.PendingLimitMax)
		}
		if choice&2 != 0 {
			req.Cursor = string(proto.AppendCursor(nil, core.InboxPos{Since: core.Time(timeoutMs), Run: core.RunID(run), Key: core.Key(key)}))
		}
	}
	return req
}

// readEvent is what a Reader gave for one line: the line or an error, and then what
// the decoder made of the line.
type readEvent struct {
	line    string
	readErr string
	req     proto.Request
	decErr  string
	decID   proto.ID
}

// readStream reads every line of src with a Reader of the given limit and, if decode
// is set, decodes it. (Decoding is a function of the line alone, which FuzzDecode
// checks, so comparing the lines of two reads compares their requests too.)
func readStream(t *testing.T, src io.Reader, limit int, decode bool) []readEvent {
	t.Helper()
	r := proto.NewReaderSize(src, limit)
	var d proto.Decoder
	var out []readEvent
	for n := 0; ; n++ {
		if n > 1<<20 {
			t.Fatal("Reader returned more than 2^20 lines")
		}
		line, err := r.ReadLine()
		if err == io.EOF {
			return out
		}
		if err != nil {
			var de *proto.DecodeError
			if !errors.As(err, &de) || de.Err != proto.ErrLineTooLong {
				t.Fatalf("ReadLine: unexpected error %v", err)
			}
			out = append(out, readEvent{readErr: de.Err.Type})
			continue
		}
		if len(line) > limit && limit >= 1 {
			t.Fatalf("ReadLine returned %d bytes over the limit %d", len(line), limit)
		}
		ev := readEvent{line: string(line)}
		if !decode {
			out = append(out, ev)
			continue
		}
		if err := d.Decode(line, &ev.req); err != nil {
			var de *proto.DecodeError
			errors.As(err, &de)
			ev.decErr, ev.decID = de.Err.Type, de.ID
		}
		out = append(out, ev)
	}
}

// toCRLF turns every LF not preceded by a CR into CRLF.
func toCRLF(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for i, c := range b {
		if c == '\n' && (i == 0 || b[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}

func sameEvents(a, b []readEvent) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// splitPointsMax bounds the split points tried per input (every point for inputs up
// to this length, evenly spaced ones beyond), and bytewiseBytesMax the inputs also fed
// one byte per read, so that one input costs O(n) reads.
const (
	splitPointsMax   = 128
	bytewiseBytesMax = 8 << 10
)

func FuzzReaderSplit(f *testing.F) {
	f.Fuzz(func(t *testing.T, stream []byte, small uint8) {
		// Two limits: the protocol's, and a small one that makes the oversize path
		// reachable from short inputs.
		for _, limit := range []int{proto.LineBytesMax, 1 + int(small)%64} {
			whole := readStream(t, bytes.NewReader(stream), limit, true)
			lines := make([]readEvent, len(whole))
			for i, ev := range whole {
				lines[i] = readEvent{line: ev.line, readErr: ev.readErr}
			}
			step := 1
			if len(stream) > splitPointsMax {
				step = len(stream) / splitPointsMax
			}
			for i := 0; i <= len(stream); i += step {
				split := readStream(t, io.MultiReader(bytes.NewReader(stream[:i]), bytes.NewReader(stream[i:])), limit, false)
				if !sameEvents(lines, split) {
					t.Fatalf("limit %d: split at %d of %q:\n got %+v\nwant %+v", limit, i, stream, split, lines)
				}
			}
			if len(stream) <= bytewiseBytesMax {
				bytewise := readStream(t, iotest.OneByteReader(bytes.NewReader(stream)), limit, false)
				if !sameEvents(lines, bytewise) {
					t.Fatalf("limit %d: byte by byte %q:\n got %+v\nwant %+v", limit, stream, bytewise, lines)
				}
			}
			crlf := readStream(t, iotest.HalfReader(bytes.NewReader(toCRLF(stream))), limit, true)
			if !sameEvents(whole, crlf) {
				t.Fatalf("limit %d: CRLF form of %q:\n got %+v\nwant %+v", limit, stream, crlf, whole)
			}
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	f.Fuzz(func(t *testing.T, line []byte) {
		resp, err := proto.DecodeResponse(line)
		// DecodeResponse reads the gate's own shape of result answer without
		// reflection and every other line with encoding/json. A space after the
		// opening brace changes nothing in JSON but always takes the general path:
		// both must agree (on the answer, and on an admit's result).
		if len(line) > 0 && line[0] == '{' {
			spaced := append([]byte("{ "), line[1:]...)
			gen, gerr := proto.DecodeResponse(spaced)
			if (err == nil) != (gerr == nil) || (err == nil && !sameResponse(resp, gen)) {
				t.Fatalf("%q: the fast and the general path differ: %+v, %v; general %+v, %v", line, resp, err, gen, gerr)
			}
			if err == nil && resp.Result != nil && resp.Result[0] == '{' {
				var fast, general proto.AdmitResult
				ferr := fast.UnmarshalJSON(resp.Result)
				gerr := general.UnmarshalJSON(append([]byte("{ "), resp.Result[1:]...))
				if (ferr == nil) != (gerr == nil) || fast != general {
					t.Fatalf("%q: admit result: fast path %+v, %v; general %+v, %v", resp.Result, fast, ferr, general, gerr)
				}
			}
		}
		if err != nil {
			return
		}
		if resp.Error != nil {
			again, err := proto.DecodeResponse(proto.AppendError(nil, resp.ID, resp.Error.Err()))
			if err != nil || again.ID != resp.ID || again.Error == nil || again.Error.Type != resp.Error.Type {
				t.Fatalf("%q: error answer does not survive a re-encoding: %+v, %v", line, again, err)
			}
			return
		}
		for _, m := range proto.Methods {
			r := proto.NewResult(m)
			if json.Unmarshal(resp.Result, r) != nil {
				continue
			}
			enc := proto.AppendResult(nil, resp.ID, r)
			back, err := proto.DecodeResponse(enc)
			if err != nil || back.ID != resp.ID {
				t.Fatalf("%q: re-encoded %T %q does not read back: %v", line, r, enc, err)
			}
			r2 := proto.NewResult(m)
			if err := json.Unmarshal(back.Result, r2); err != nil {
				t.Fatalf("%q: re-encoded %T %q does not unmarshal: %v", line, r, enc, err)
			}
			if enc2 := proto.AppendResult(nil, back.ID, r2); !bytes.Equal(enc, enc2) {
				t.Fatalf("%q: %T is not stable: %q then %q", line, r, enc, enc2)
			}
		}
	})
}

// sameResponse compares two decoded answers.
func sameResponse(a, b proto.Response) bool {
	if a.ID != b.ID || !bytes.Equal(a.Result, b.Result) || (a.Error == nil) != (b.Error == nil) {
		return false
	}
	return a.Error == nil || *a.Error == *b.Error
}
