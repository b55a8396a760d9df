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
		if req.Description != "" {
			dst = appendStr(dst, "description", req.Description, false)
		}
		if req.ArgsDigest != "" {
			dst = appendStr(dst, "args_digest", req.ArgsDigest, false)
		}
	case MethodDecide:
		dst = appendStr(dst, "run", string(req.Run), true)
		dst = appendStr(dst, "key", string(req.Key), false)
		dst = appendStr(dst, "decision", req.Decision.String(), false)
		if req.Reason != "" {
			dst = appendStr(dst, "reason", req.Reason, false)
		}
	case MethodComplete:
		dst = appendStr(dst, "run", string(req.Run), true)
		dst = appendStr(dst, "key", string(req.Key), false)
		dst = appendStr(dst, "outcome", req.Outcome.String(), false)
		if req.Result != "" {
			dst = appendStr(dst, "result", req.Result, false)
		}
	case MethodCancel, MethodFence:
		dst = appendStr(dst, "run", string(req.Run), true)
		if req.Reason != "" {
			dst = appendStr(dst, "reason", req.Reason, false)
		}
	case MethodStatus:
		dst = appendStr(dst, "run", string(req.Run), true)
		if req.Key != "" {
			dst = appendStr(dst, "key", string(req.Key), false)
		}
	case MethodPending:
		first := true
		if req.Limit != 0 {
			dst, first = appendInt(dst, "limit", req.Limit, true), false
		}
		if req.Cursor != "" {
			dst = appendStr(dst, "cursor", req.Cursor, first)
		}
	case MethodWatch, MethodUnwatch: // no params
	}
	return append(dst, "}}\n"...)
}

// Validate reports whether req is a request Decode could return: a known method, its
// required fields set and every field in range, the other fields zero. It returns
// the error Decode would give for the first fault (a *DecodeError), or nil.
func (req *Request) Validate() error {
	if detail := req.ID.fault(); detail != "" {
		return req.invalid(ErrInvalidRequest, "id", detail)
	}
	if req.Method == MethodNone || int(req.Method) >= len(methodFields) {
		return req.invalid(ErrUnknownMethod, "method", req.Method.String())
	}
	set, de := req.fieldsSet()
	if de != nil {
		return de
	}
	spec := methodFields[req.Method]
	if extra := set &^ spec.allowed; extra != 0 {
		return req.invalid(ErrUnknownField, paramNames[firstField(extra)], "not a field of "+req.Method.String())
	}
	if missing := spec.required &^ set; missing != 0 {
		return req.invalid(ErrMissingField, paramNames[firstField(missing)], "required by "+req.Method.String())
	}
	return nil
}

// invalid is the error Validate gives: Decode's, with no place in a line.
func (req *Request) invalid(kind *Error, field, detail string) *DecodeError {
	return &DecodeError{Err: kind, ID: req.ID, Field: field, Offset: -1, Detail: detail}
}

// fault says why id cannot be a request's id, or is "" if it can.
func (id ID) fault() string {
	switch id.Kind {
	case IDInt:
		if id.Int > IntMax || id.Int < -IntMax || id.Str != "" {
			return "integer id beyond 2^53-1"
		}
	case IDString:
		if len(id.Str) > IDBytesMax || !validString(id.Str) || id.Int != 0 {
			return "string id longer than 64 bytes or not UTF-8"
		}
	default:
		return "null id"
	}
	return ""
}

// fieldsSet returns the bits of the params fields req sets (those not zero), or the
// error for the first whose value is out of its range.
func (req *Request) fieldsSet() (set uint16, de *DecodeError) {
	if req.Version != 0 {
		set |= bVersion
		if !inRange(fVersion, req.Version) {
			return set, req.outOfRange(fVersion, rangeDetail)
		}
	}
	strs := [...]struct {
		f field
		s string
	}{{fToken, req.Token}, {fRun, string(req.Run)}, {fKey, string(req.Key)}, {fResult, req.Result},
		{fDescription, req.Description}, {fArgsDigest, req.ArgsDigest}, {fReason, req.Reason}, {fCursor, req.Cursor}}
	for _, s := range strs {
		if s.s == "" {
			continue
		}
		set |= bit << s.f
		if !inRange(s.f, int64(len(s.s))) || !validString(s.s) {
			return set, req.outOfRange(s.f, lengthDetail)
		}
		if err := checkText(s.f, s.s); err != nil {
			return set, req.invalid(ErrOutOfRange, paramNames[s.f], err.Error())
		}
	}
	if req.Epoch != 0 {
		set |= bEpoch
		if req.Epoch > uint64(fieldRange[fEpoch].hi) {
			return set, req.outOfRange(fEpoch, rangeDetail)
		}
	}
	if req.Gated {
		set |= bGated
	}
	for _, n := range [...]struct {
		f field
		v int64
	}{{fWaitMs, req.WaitMs}, {fTimeoutMs, req.TimeoutMs}, {fLimit, req.Limit}} {
		if n.v == 0 {
			continue
		}
		set |= bit << n.f
		if !inRange(n.f, n.v) {
			return set, req.outOfRange(n.f, rangeDetail)
		}
	}
	if req.Decision != 0 {
		set |= bDecision
		if req.Decision != core.Approve && req.Decision != core.Reject {
			return set, req.invalid(ErrOutOfRange, "params.decision", "not a decision")
		}
	}
	if req.Outcome != core.OutcomeNone {
		set |= bOutcome
		if req.Outcome != core.OutcomeOK && req.Outcome != core.OutcomeFailed {
			return set, req.invalid(ErrOutOfRange, "params.outcome", "not an outcome")
		}
	}
	return set, nil
}

// inRange reports whether v is within fieldRange[f].
func inRange(f field, v int64) bool { return v >= fieldRange[f].lo && v <= fieldRange[f].hi }

// outOfRange is Validate's error for field f out of fieldRange[f], described by detail.
func (req *Request) outOfRange(f field, detail func(lo, hi int64) string) *DecodeError {
	return req.invalid(ErrOutOfRange, paramNames[f], detail(fieldRange[f].lo, fieldRange[f].hi))
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
