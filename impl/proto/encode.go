package proto

import (
	"strconv"

	"github.com/soundgate/soundgate/impl/core"
)

// AppendRequest appends req as one request line, LF included, to dst. Only the fields
// of req.Method are written, and optional fields only when they are not zero, so that
// Decode(AppendRequest(nil, req)) gives req back for every valid req (see Validate).
func AppendRequest(dst []byte, req *Request) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = req.ID.AppendJSON(dst)
	dst = append(dst, `,"method":"`...)
	dst = append(dst, req.Method.String()...)
	dst = append(dst, `","params":{`...)
	switch req.Method {
	case MethodHello:
		dst = appendInt(dst, "version", req.Version, true)
		dst = appendStr(dst, "token", req.Token, false)
	case MethodOpen:
		dst = appendStr(dst, "run", string(req.Run), true)
		if req.TimeoutMs != 0 {
			dst = appendInt(dst, "timeout_ms", req.TimeoutMs, false)
		}
	case MethodAdmit:
		dst = appendStr(dst, "run", string(req.Run), true)
		dst = appendStr(dst, "key", string(req.Key), false)
		dst = appendUint(dst, "epoch", req.Epoch, false)
		if req.Gated {
			dst = append(dst, `,"gated":true`...)
		}
		if req.WaitMs != 0 {
			dst = appendInt(dst, "wait_ms", req.WaitMs, false)
		}
	case MethodDecide:
		dst = appendStr(dst, "run", string(req.Run), true)
		dst = appendStr(dst, "key", string(req.Key), false)
		dst = appendStr(dst, "decision", req.Decision.String(), false)
	case MethodComplete:
		dst = appendStr(dst, "run", string(req.Run), true)
		dst = appendStr(dst, "key", string(req.Key), false)
		dst = appendStr(dst, "outcome", req.Outcome.String(), false)
		if req.Result != "" {
			dst = appendStr(dst, "result", req.Result, false)
		}
	case MethodCancel, MethodFence:
		dst = appendStr(dst, "run", string(req.Run), true)
	case MethodStatus:
		dst = appendStr(dst, "run", string(req.Run), true)
		if req.Key != "" {
			dst = appendStr(dst, "key", string(req.Key), false)
		}
	}
	return append(dst, "}}\n"...)
}

// Validate reports whether req is a request Decode could return: a known method, its
// required fields set and every field in range, the other fields zero. It returns
// the error Decode would give for the first fault (a *DecodeError), or nil.
func (req *Request) Validate() error {
	bad := func(kind *Error, f, detail string) error {
		return &DecodeError{Err: kind, ID: req.ID, Field: f, Offset: -1, Detail: detail}
	}
	switch req.ID.Kind {
	case IDInt:
		if req.ID.Int > IntMax || req.ID.Int < -IntMax || req.ID.Str != "" {
			return bad(ErrInvalidRequest, "id", "integer id beyond 2^53-1")
		}
	case IDString:
		if len(req.ID.Str) > IDBytesMax || !validString(req.ID.Str) || req.ID.Int != 0 {
			return bad(ErrInvalidRequest, "id", "string id longer than 64 bytes or not UTF-8")
		}
	default:
		return bad(ErrInvalidRequest, "id", "null id")
	}
	if req.Method == MethodNone || int(req.Method) >= len(methodFields) {
		return bad(ErrUnknownMethod, "method", req.Method.String())
	}
	spec := methodFields[req.Method]
	set := uint16(0)
	if req.Version != 0 {
		set |= bVersion
		if req.Version < 1 || req.Version > IntMax {
			return bad(ErrOutOfRange, "params.version", rangeDetail(1, IntMax))
		}
	}
	strs := []struct {
		f      field
		s      string
		lo, hi int
	}{
		{fToken, req.Token, 1, TokenBytesMax},
		{fRun, string(req.Run), 1, RunBytesMax},
		{fKey, string(req.Key), 1, KeyBytesMax},
		{fResult, req.Result, 0, ResultBytesMax}, // "" is absent; the range is Decode's
	}
	for _, s := range strs {
		if s.s == "" {
			continue
		}
		set |= bit << s.f
		if len(s.s) < s.lo || len(s.s) > s.hi || !validString(s.s) {
			return bad(ErrOutOfRange, "params."+fieldNames[s.f], lengthDetail(s.lo, s.hi))
		}
	}
	if req.Epoch != 0 {
		set |= bEpoch
		if req.Epoch > IntMax {
			return bad(ErrOutOfRange, "params.epoch", rangeDetail(1, IntMax))
		}
	}
	if req.Gated {
		set |= bGated
	}
	if req.WaitMs != 0 {
		set |= bWaitMs
		if req.WaitMs < 0 || req.WaitMs > WaitMsMax {
			return bad(ErrOutOfRange, "params.wait_ms", rangeDetail(0, WaitMsMax))
		}
	}
	if req.TimeoutMs != 0 {
		set |= bTimeoutMs
		if req.TimeoutMs < 1 || req.TimeoutMs > TimeoutMsMax {
			return bad(ErrOutOfRange, "params.timeout_ms", rangeDetail(1, TimeoutMsMax))
		}
	}
	if req.Decision != 0 {
		set |= bDecision
		if req.Decision != core.Approve && req.Decision != core.Reject {
			return bad(ErrOutOfRange, "params.decision", "not a decision")
		}
	}
	if req.Outcome != core.OutcomeNone {
		set |= bOutcome
		if req.Outcome != core.OutcomeOK && req.Outcome != core.OutcomeFailed {
			return bad(ErrOutOfRange, "params.outcome", "not an outcome")
		}
	}
	if extra := set &^ spec.allowed; extra != 0 {
		for t := field(0); t < nFields; t++ {
			if extra&(bit<<t) != 0 {
				return bad(ErrUnknownField, "params."+fieldNames[t], "not a field of "+req.Method.String())
			}
		}
	}
	if missing := spec.required &^ set; missing != 0 {
		for t := field(0); t < nFields; t++ {
			if missing&(bit<<t) != 0 {
				return bad(ErrMissingField, "params."+fieldNames[t], "required by "+req.Method.String())
			}
		}
	}
	return nil
}

// validString reports whether s is valid UTF-8 (the wire carries nothing else).
func validString(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return utf8ValidString(s)
		}
	}
	return true
}

func appendKey(dst []byte, name string, first bool) []byte {
	if !first {
		dst = append(dst, ',')
	}
	dst = append(dst, '"')
	dst = append(dst, name...)
	return append(dst, '"', ':')
}

func appendStr(dst []byte, name, v string, first bool) []byte {
	return appendString(appendKey(dst, name, first), v)
}

func appendInt(dst []byte, name string, v int64, first bool) []byte {
	return strconv.AppendInt(appendKey(dst, name, first), v, 10)
}

func appendUint(dst []byte, name string, v uint64, first bool) []byte {
	return strconv.AppendUint(appendKey(dst, name, first), v, 10)
}

func appendBool(dst []byte, name string, v bool, first bool) []byte {
	return strconv.AppendBool(appendKey(dst, name, first), v)
}
