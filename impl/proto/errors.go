package proto

import (
	"errors"
	"strconv"
	"strings"

	"github.com/soundgate/soundgate/impl/core"
)

// JSON-RPC 2.0 error codes, and the application range soundgate uses (-32000..-32099,
// JSON-RPC's "server error" range). Each error also carries data.type, a stable name
// that is finer than the code; clients should switch on data.type.
const (
	CodeParseError     = -32700 // the line is not JSON, or not valid UTF-8
	CodeInvalidRequest = -32600 // not a valid request envelope (or too long, or a duplicate key)
	CodeMethodNotFound = -32601 // unknown method
	CodeInvalidParams  = -32602 // params: unknown field, wrong type, missing, out of range
	CodeInternal       = -32603 // a server fault; the request may not have been applied

	// The server's refusals: -32001..-32009.
	CodeUnauthenticated    = -32001
	CodeForbidden          = -32002
	CodeUnavailable        = -32003
	CodeShuttingDown       = -32004
	CodeOverloaded         = -32005
	CodeUnsupportedVersion = -32006
	CodeHelloRequired      = -32007
	CodeHelloRepeated      = -32008
	CodeQuota              = -32009

	// The server's refusals added after -32009 was taken: -32040..-32059.
	CodeWatchRepeated = -32040
	CodeNotWatching   = -32041

	// The core's typed errors: -32010..-32039, one code per core error (see CoreCode).
	CodeCoreFirst = -32010
	CodeCoreLast  = -32039
)

// Error is one kind of protocol failure: a JSON-RPC code and the data.type name that
// travels with it. The package's exported *Error values are sentinels: compare with
// errors.Is. Decoding failures come wrapped in a *DecodeError.
type Error struct {
	Code int    // the JSON-RPC error code
	Type string // error.data.type on the wire
	msg  string
}

// Error returns the message with the package prefix ("soundgate/proto: wrong type").
func (e *Error) Error() string { return "soundgate/proto: " + e.msg }

// Message returns the human-readable text sent as error.message.
func (e *Error) Message() string { return e.msg }

// Is makes errors.Is match on Type, so that an *Error read back from the wire (see
// ErrorObject.Err) compares equal to the sentinel.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.Type == e.Type
}

func newError(code int, typ, msg string) *Error { return &Error{Code: code, Type: typ, msg: msg} }

// Decoding errors, in the order the decoder checks them (docs/protocol.md, "Errors").
// Every decoding failure is exactly one of these. The connection stays open after
// each: the next line is read as usual.
var (
	// ErrLineTooLong: the line exceeds LineBytesMax; it was discarded up to its newline.
	ErrLineTooLong = newError(CodeInvalidRequest, "line_too_long", "line too long")
	// ErrInvalidUTF8: the line is not valid UTF-8.
	ErrInvalidUTF8 = newError(CodeParseError, "invalid_utf8", "invalid UTF-8")
	// ErrParse: the line is not exactly one JSON value (syntax error, bad escape, an
	// escaped lone surrogate, trailing data, or an empty line given to Decode).
	ErrParse = newError(CodeParseError, "parse_error", "parse error")
	// ErrDuplicateKey: an object, at any depth, names the same member twice.
	ErrDuplicateKey = newError(CodeInvalidRequest, "duplicate_key", "duplicate key")
	// ErrInvalidRequest: the envelope is wrong: not an object, id missing or invalid,
	// jsonrpc not "2.0", method missing or not a string, or an unknown top-level member.
	ErrInvalidRequest = newError(CodeInvalidRequest, "invalid_request", "invalid request")
	// ErrUnknownMethod: the method is not one of the protocol's.
	ErrUnknownMethod = newError(CodeMethodNotFound, "unknown_method", "unknown method")
	// ErrUnknownField: params has a member the method does not define.
	ErrUnknownField = newError(CodeInvalidParams, "unknown_field", "unknown field")
	// ErrWrongType: a member has the wrong JSON type (a string for an integer, a float,
	// params not an object, ...).
	ErrWrongType = newError(CodeInvalidParams, "wrong_type", "wrong type")
	// ErrOutOfRange: a value is outside its range: a number or length limit, an empty
	// run or key, or a name that is not in its enumeration.
	ErrOutOfRange = newError(CodeInvalidParams, "out_of_range", "value out of range")
	// ErrMissingField: a required member of params (or params itself) is missing.
	ErrMissingField = newError(CodeInvalidParams, "missing_field", "missing field")
)

// DecodeErrors lists the decoding errors in the order the decoder checks them.
var DecodeErrors = []*Error{
	ErrLineTooLong, ErrInvalidUTF8, ErrParse, ErrDuplicateKey, ErrInvalidRequest,
	ErrUnknownMethod, ErrUnknownField, ErrWrongType, ErrOutOfRange, ErrMissingField,
}

// The server's refusals. docs/protocol.md says, for each, whether the connection stays
// open; this package only names them so that server and clients agree.
var (
	// ErrUnauthenticated: the hello's token is not known. The connection is closed.
	ErrUnauthenticated = newError(CodeUnauthenticated, "unauthenticated", "unauthenticated")
	// ErrHelloRequired: a request other than hello before a successful hello.
	ErrHelloRequired = newError(CodeHelloRequired, "hello_required", "hello required first")
	// ErrHelloRepeated: a second hello on a connection that already completed one.
	ErrHelloRepeated = newError(CodeHelloRepeated, "hello_repeated", "hello already done")
	// ErrUnsupportedVersion: the hello names a protocol version the server does not speak.
	ErrUnsupportedVersion = newError(CodeUnsupportedVersion, "unsupported_version", "unsupported protocol version")
	// ErrForbidden: the role may not call this method, or the run is outside the token's scope.
	ErrForbidden = newError(CodeForbidden, "forbidden", "forbidden")
	// ErrUnavailable: the gate cannot decide safely (e.g. its log failed) and refuses (fail closed).
	ErrUnavailable = newError(CodeUnavailable, "unavailable", "unavailable")
	// ErrShuttingDown: the server is shutting down and takes no new request.
	ErrShuttingDown = newError(CodeShuttingDown, "shutting_down", "shutting down")
	// ErrOverloaded: too many connections or waiting requests; retry later.
	ErrOverloaded = newError(CodeOverloaded, "overloaded", "overloaded")
	// ErrQuota: the token holds all that its quota allows (the message says which
	// quota and how much); other tokens are not held back.
	ErrQuota = newError(CodeQuota, "quota", "quota")
	// ErrInternal: a fault of the server. The request's effect on the gate is unknown.
	ErrInternal = newError(CodeInternal, "internal", "internal error")
	// ErrWatchRepeated: a watch on a connection that watches already (one a
	// connection); the watch goes on as before.
	ErrWatchRepeated = newError(CodeWatchRepeated, "watch_repeated", "the connection watches already")
	// ErrNotWatching: an unwatch on a connection that does not watch.
	ErrNotWatching = newError(CodeNotWatching, "not_watching", "the connection does not watch")
)

// ServerErrors lists the server's refusals.
var ServerErrors = []*Error{
	ErrUnauthenticated, ErrHelloRequired, ErrHelloRepeated, ErrUnsupportedVersion,
	ErrForbidden, ErrUnavailable, ErrShuttingDown, ErrOverloaded, ErrQuota, ErrInternal,
	ErrWatchRepeated, ErrNotWatching,
}

// coreCodes gives each core error its wire code. Appending only: a code once given
// never changes meaning within protocol version 1.
var coreCodes = map[string]int{
	"unknown_run":      -32010,
	"bad_epoch":        -32011,
	"not_pending":      -32012,
	"not_admitted":     -32013,
	"conflict":         -32014,
	"run_final":        -32015,
	"invalid_argument": -32016,
	"too_many_runs":    -32017,
	"too_many_keys":    -32018,
	"too_many_pending": -32019,
	"run_too_long":     -32020,
	"key_too_long":     -32021,
	"result_too_long":  -32022,
	"run_retired":      -32023,
	"not_finished":     -32024,
	"too_many_retired": -32025,
	"state_full":       -32026,
}

// CoreCode returns the wire code of the core error whose Code is typ, and false if the
// core error has no code (then it is sent as ErrInternal; a test keeps this from
// happening for every error in core.Errors).
func CoreCode(typ string) (int, bool) {
	c, ok := coreCodes[typ]
	return c, ok
}

// DecodeError is a line that could not be decoded into a Request. Err is the kind;
// ID is the request's id when the envelope allowed reading it (else the null id), so
// that the error answer can carry it.
type DecodeError struct {
	Err    *Error // one of DecodeErrors
	ID     ID     // the request's id, or the null id
	Field  string // the member at fault ("id", "params.epoch", ...), if one is
	Offset int    // byte offset in the line where the fault was found, or -1
	Detail string // what exactly was wrong, for the error message
}

// Error returns the kind, the field, the detail and the offset, for logs.
func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Err.Error())
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	if e.Offset >= 0 {
		b.WriteString(" (at byte ")
		b.WriteString(strconv.Itoa(e.Offset))
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the sentinel, for errors.Is.
func (e *DecodeError) Unwrap() error { return e.Err }

// message is the error.message text of e: Error without the package prefix.
func (e *DecodeError) message() string { return strings.TrimPrefix(e.Error(), "soundgate/proto: ") }

// ErrorObject is the error member of an error answer.
type ErrorObject struct {
	Code    int    // JSON-RPC code
	Message string // for people; may change between releases
	Type    string // data.type: stable, for programs
	Field   string // data.field: the member at fault, when known ("params.epoch")
}

// Err returns the sentinel for o's type: a *core.Error for the core's types, a
// *Error of this package otherwise (a new one if the type is unknown to this version).
// The result matches the sentinels with errors.Is.
func (o ErrorObject) Err() error {
	for _, e := range core.Errors {
		if e.Code == o.Type {
			return e
		}
	}
	for _, e := range DecodeErrors {
		if e.Type == o.Type {
			return e
		}
	}
	for _, e := range ServerErrors {
		if e.Type == o.Type {
			return e
		}
	}
	return &Error{Code: o.Code, Type: o.Type, msg: o.Message}
}

// ErrorObjectOf maps any error to the error object sent for it: a *DecodeError or an
// *Error of this package keeps its code and type, a *core.Error gets its CoreCode and
// its Code as type, anything else is ErrInternal.
func ErrorObjectOf(err error) ErrorObject {
	var de *DecodeError
	if errors.As(err, &de) {
		return ErrorObject{Code: de.Err.Code, Type: de.Err.Type, Message: de.message(), Field: de.Field}
	}
	var pe *Error
	if errors.As(err, &pe) {
		return ErrorObject{Code: pe.Code, Type: pe.Type, Message: trimPrefix(err.Error())}
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		if c, ok := CoreCode(ce.Code); ok {
			return ErrorObject{Code: c, Type: ce.Code, Message: trimPrefix(err.Error())}
		}
	}
	return ErrorObject{Code: ErrInternal.Code, Type: ErrInternal.Type, Message: ErrInternal.msg}
}

func trimPrefix(s string) string {
	for _, p := range []string{"soundgate/proto: ", "soundgate/core: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
