package proto

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/soundgate/soundgate/impl/core"
)

// Result is the result member of a successful answer: one of the *Result types below.
// Each appends its JSON object with AppendJSON and reads it back with UnmarshalJSON;
// readers ignore members they do not know, so that a later version may add some.
type Result interface {
	AppendJSON(dst []byte) []byte
}

// methodResults gives each method the result type that answers it.
var methodResults = [...]func() Result{
	MethodHello:    func() Result { return new(HelloResult) },
	MethodOpen:     func() Result { return new(OpenResult) },
	MethodAdmit:    func() Result { return new(AdmitResult) },
	MethodDecide:   func() Result { return new(DecideResult) },
	MethodComplete: func() Result { return new(CompleteResult) },
	MethodCancel:   func() Result { return new(CancelResult) },
	MethodFence:    func() Result { return new(FenceResult) },
	MethodStatus:   func() Result { return new(StatusResult) },
	MethodPending:  func() Result { return new(PendingResult) },
	MethodWatch:    func() Result { return new(WatchResult) },
	MethodUnwatch:  func() Result { return new(UnwatchResult) },
}

// NewResult returns a new zero result of the type that answers m, to read an answer
// into; nil if m is not a method.
func NewResult(m Method) Result {
	if int(m) >= len(methodResults) || methodResults[m] == nil {
		return nil
	}
	return methodResults[m]()
}

// AppendResult appends the answer line {"jsonrpc":"2.0","id":id,"result":r}, LF
// included, to dst.
func AppendResult(dst []byte, id ID, r Result) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.AppendJSON(dst)
	dst = append(dst, `,"result":`...)
	dst = r.AppendJSON(dst)
	return append(dst, "}\n"...)
}

// AppendError appends the error answer for err (see ErrorObjectOf), LF included:
// {"jsonrpc":"2.0","id":id,"error":{"code":C,"message":M,"data":{"type":T}}}.
// data.field names the member at fault when err is a *DecodeError that knows it.
func AppendError(dst []byte, id ID, err error) []byte {
	o := ErrorObjectOf(err)
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.AppendJSON(dst)
	dst = append(dst, `,"error":{"code":`...)
	dst = strconv.AppendInt(dst, int64(o.Code), 10)
	dst = appendStr(dst, "message", o.Message, false)
	dst = append(dst, `,"data":{"type":`...)
	dst = appendString(dst, o.Type)
	if o.Field != "" {
		dst = appendStr(dst, "field", o.Field, false)
	}
	return append(dst, "}}}\n"...)
}

// Response is one answer line as a client reads it: the id, and either Result (the raw
// JSON of the result member, for the result type of the request's method) or Error.
type Response struct {
	ID     ID
	Result json.RawMessage
	Error  *ErrorObject
}

// DecodeResponse reads one answer line (with or without its LF or CRLF). Result is
// a copy: it does not alias line.
func DecodeResponse(line []byte) (Response, error) {
	if r, ok := decodeResultFast(trimEOL(line)); ok {
		return r, nil
	}
	return decodeResponseGeneral(line)
}

// decodeResponseGeneral is DecodeResponse for every line, with encoding/json.
func decodeResponseGeneral(line []byte) (Response, error) {
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				Type  string `json:"type"`
				Field string `json:"field"`
			} `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(trimEOL(line), &env); err != nil {
		return Response{}, fmt.Errorf("soundgate/proto: bad answer: %w", err)
	}
	if env.JSONRPC != "2.0" {
		return Response{}, errors.New(`soundgate/proto: bad answer: jsonrpc is not "2.0"`)
	}
	var r Response
	var err error
	if r.ID, err = parseResponseID(env.ID); err != nil {
		return Response{}, err
	}
	switch {
	case env.Error != nil && env.Result == nil:
		e := env.Error
		r.Error = &ErrorObject{Code: e.Code, Message: e.Message, Type: e.Data.Type, Field: e.Data.Field}
	case env.Error == nil && env.Result != nil:
		r.Result = env.Result
	default:
		return Response{}, errors.New("soundgate/proto: bad answer: needs exactly one of result and error")
	}
	return r, nil
}

// decodeResultFast reads, without reflection, the one shape the gate writes for a
// result with an integer id: {"jsonrpc":"2.0","id":N,"result":{...}} with no
// whitespace around the result object. Anything else (an error answer, a string id,
// whitespace, another member order, a bad result) is left to the general decoder
// (ok false). For every line it accepts, it gives the Response DecodeResponse's
// general path gives (TestDecodeResponseFastPath; FuzzDecodeResponse checks it on
// every input). It exists for the client's hot path: the general path costs two
// reflective decodes per answer.
func decodeResultFast(b []byte) (r Response, ok bool) {
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return Response{}, false
	}
	b = b[len(head):]
	neg := len(b) > 0 && b[0] == '-'
	i := 0
	if neg {
		i = 1
	}
	var n int64
	digits := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		n = n*10 + int64(b[i]-'0')
		digits++
	}
	// At most 18 digits: no overflow. A leading zero is not JSON: the general path
	// refuses it.
	if digits == 0 || digits > 18 || (digits > 1 && b[i-digits] == '0') {
		return Response{}, false
	}
	if neg {
		n = -n
	}
	rest := b[i:]
	if !bytes.HasPrefix(rest, []byte(mid)) || len(rest) < len(mid)+3 || rest[len(rest)-1] != '}' {
		return Response{}, false
	}
	res := rest[len(mid) : len(rest)-1]
	if res[0] != '{' || res[len(res)-1] != '}' || !json.Valid(res) {
		return Response{}, false
	}
	return Response{ID: IntID(n), Result: append(json.RawMessage(nil), res...)}, true
}

func parseResponseID(raw json.RawMessage) (ID, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0:
		return ID{}, errors.New("soundgate/proto: bad answer: no id")
	case string(raw) == "null":
		return ID{}, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return ID{}, err
		}
		return StringID(s), nil
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return ID{}, fmt.Errorf("soundgate/proto: bad answer: id: %w", err)
	}
	return IntID(n), nil
}

// HelloResult answers hello.
type HelloResult struct {
	Version int64  // the protocol version the server speaks on this connection
	Role    Role   // what the token may do
	Server  string // "soundgate <version>"
}

// AppendJSON appends r's JSON object to dst.
func (r *HelloResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendInt(dst, "version", r.Version, true)
	dst = appendStr(dst, "role", r.Role.String(), false)
	dst = appendStr(dst, "server", r.Server, false)
	return append(dst, '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *HelloResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Version int64  `json:"version"`
		Role    string `json:"role"`
		Server  string `json:"server"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	role, ok := ParseRole(w.Role)
	if !ok {
		return badName("role", w.Role)
	}
	*r = HelloResult{Version: w.Version, Role: role, Server: w.Server}
	return nil
}

// OpenResult answers open: the run as it is after the request.
type OpenResult struct {
	Run        core.RunID
	Status     core.RunStatus
	Epoch      uint64
	DeadlineMs core.Time // absolute, on the gate's clock (ms since the Unix epoch); 0: none
	Created    bool      // false: the run existed and nothing changed (open is idempotent)
}

// AppendJSON appends r's JSON object to dst.
func (r *OpenResult) AppendJSON(dst []byte) []byte {
	dst = appendRun(dst, r.Run, r.Status, r.Epoch)
	if r.DeadlineMs != 0 {
		dst = appendInt(dst, "deadline_ms", int64(r.DeadlineMs), false)
	}
	dst = appendBool(dst, "created", r.Created, false)
	return append(dst, '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *OpenResult) UnmarshalJSON(b []byte) error {
	var w struct {
		runWire
		DeadlineMs int64 `json:"deadline_ms"`
		Created    bool  `json:"created"`
	}
	st, err := readRun(b, &w, &w.runWire)
	if err != nil {
		return err
	}
	*r = OpenResult{Run: core.RunID(w.Run), Status: st, Epoch: w.Epoch, DeadlineMs: core.Time(w.DeadlineMs), Created: w.Created}
	return nil
}

// AdmitResult answers admit.
type AdmitResult struct {
	Answer  core.Answer
	Reason  core.Reason  // with AnswerDenied
	Outcome core.Outcome // with AnswerDuplicate, once the effect was completed
	Result  string       // the completed effect's result, with Outcome
	Epoch   uint64       // the run's epoch after the request
}

// AppendJSON appends r's JSON object to dst.
func (r *AdmitResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendStr(dst, "answer", r.Answer.String(), true)
	if r.Reason != core.ReasonNone {
		dst = appendStr(dst, "reason", r.Reason.String(), false)
	}
	if r.Outcome != core.OutcomeNone {
		dst = appendStr(dst, "outcome", r.Outcome.String(), false)
	}
	if r.Result != "" {
		dst = appendStr(dst, "result", r.Result, false)
	}
	dst = appendUint(dst, "epoch", r.Epoch, false)
	return append(dst, '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *AdmitResult) UnmarshalJSON(b []byte) error {
	if x, ok := admitResultFast(b); ok {
		*r = x
		return nil
	}
	return r.unmarshalGeneral(b)
}

// unmarshalGeneral is UnmarshalJSON for every object, with encoding/json.
func (r *AdmitResult) unmarshalGeneral(b []byte) error {
	var w struct {
		Answer  string `json:"answer"`
		Reason  string `json:"reason"`
		Outcome string `json:"outcome"`
		Result  string `json:"result"`
		Epoch   uint64 `json:"epoch"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	var x AdmitResult
	var ok bool
	if x.Answer, ok = parseName[core.Answer](answerNames, w.Answer); !ok {
		return badName("answer", w.Answer)
	}
	if w.Reason != "" {
		if x.Reason, ok = parseName[core.Reason](reasonNames, w.Reason); !ok {
			return badName("reason", w.Reason)
		}
	}
	if w.Outcome != "" {
		if x.Outcome, ok = core.ParseOutcome(w.Outcome); !ok {
			return badName("outcome", w.Outcome)
		}
	}
	x.Result, x.Epoch = w.Result, w.Epoch
	*r = x
	return nil
}

// admitResultFast reads, without reflection, the shape the gate writes for a plain
// answer: {"answer":"NAME","epoch":N}, nothing else, no whitespace, no escapes. Any
// other object goes the general way (ok false); for every object it accepts, the
// result equals the general path's (TestAdmitResultFastPath, FuzzDecodeResponse).
func admitResultFast(b []byte) (x AdmitResult, ok bool) {
	const head, mid = `{"answer":"`, `","epoch":`
	if !bytes.HasPrefix(b, []byte(head)) {
		return AdmitResult{}, false
	}
	b = b[len(head):]
	q := bytes.IndexByte(b, '"')
	if q < 0 || bytes.IndexByte(b[:q], '\\') >= 0 {
		return AdmitResult{}, false
	}
	name := b[:q]
	found := false
	for i, n := range answerNames {
		if n != "" && n == string(name) {
			x.Answer, found = core.Answer(i), true
			break
		}
	}
	rest := b[q:]
	if !found || !bytes.HasPrefix(rest, []byte(mid)) {
		return AdmitResult{}, false
	}
	rest = rest[len(mid):]
	digits := 0
	for ; digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9'; digits++ {
		x.Epoch = x.Epoch*10 + uint64(rest[digits]-'0')
	}
	// At most 19 digits: no overflow. A leading zero is not JSON.
	if digits == 0 || digits > 19 || (digits > 1 && rest[0] == '0') || string(rest[digits:]) != "}" {
		return AdmitResult{}, false
	}
	return x, true
}

// DecideResult answers decide.
type DecideResult struct {
	Decision core.Decision
	Repeat   bool // the same decision had been taken already; nothing changed
}

// AppendJSON appends r's JSON object to dst.
func (r *DecideResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendStr(dst, "decision", r.Decision.String(), true)
	dst = appendBool(dst, "repeat", r.Repeat, false)
	return append(dst, '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *DecideResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Decision string `json:"decision"`
		Repeat   bool   `json:"repeat"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	d, ok := core.ParseDecision(w.Decision)
	if !ok {
		return badName("decision", w.Decision)
	}
	*r = DecideResult{Decision: d, Repeat: w.Repeat}
	return nil
}

// CompleteResult answers complete.
type CompleteResult struct {
	Repeat bool // the same outcome and result were recorded already; nothing changed
}

// AppendJSON appends r's JSON object to dst.
func (r *CompleteResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendBool(dst, "repeat", r.Repeat, true)
	return append(dst, '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *CompleteResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Repeat bool `json:"repeat"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	r.Repeat = w.Repeat
	return nil
}

// CancelResult answers cancel: the run's status and epoch after the request.
type CancelResult struct {
	Run    core.RunID
	Status core.RunStatus
	Epoch  uint64
}

// AppendJSON appends r's JSON object to dst.
func (r *CancelResult) AppendJSON(dst []byte) []byte {
	return append(appendRun(dst, r.Run, r.Status, r.Epoch), '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *CancelResult) UnmarshalJSON(b []byte) error {
	var w runWire
	st, err := readRun(b, &w, &w)
	if err != nil {
		return err
	}
	*r = CancelResult{Run: core.RunID(w.Run), Status: st, Epoch: w.Epoch}
	return nil
}

// FenceResult answers fence: the run's new epoch.
type FenceResult struct {
	Run   core.RunID
	Epoch uint64
}

// AppendJSON appends r's JSON object to dst.
func (r *FenceResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendStr(dst, "run", string(r.Run), true)
	dst = appendUint(dst, "epoch", r.Epoch, false)
	return append(dst, '}')
}

// UnmarshalJSON reads r from its JSON object.
func (r *FenceResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Run   string `json:"run"`
		Epoch uint64 `json:"epoch"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	*r = FenceResult{Run: core.RunID(w.Run), Epoch: w.Epoch}
	return nil
}

// StatusResult answers status: the run and, if the request named a key, its effect.
type StatusResult struct {
	Run        core.RunID
	Status     core.RunStatus
	Epoch      uint64
	Pending    []core.Key // keys whose approval is open, sorted; nil when none
	DeadlineMs core.Time  // 0: none
	Effect     *EffectResult
}

// EffectResult is one effect as status reports it. Epoch, Gated and Approved are set
// while the effect is held or released (Approved also after); Outcome and Result once
// it is completed. SinceMs, Description, ArgsDigest and Reason are its approval's
// note (core.Note), from the gated admit that opened it on, while the gate has the
// effect.
type EffectResult struct {
	Key         core.Key
	Status      core.EffectStatus
	Epoch       uint64
	Gated       bool
	Approved    bool
	Outcome     core.Outcome
	Result      string
	SinceMs     core.Time // when its approval became pending, on the gate's clock; 0: unknown or none
	Description string
	ArgsDigest  string
	Reason      string // the decider's
}

// AppendJSON appends r's JSON object to dst.
func (r *StatusResult) AppendJSON(dst []byte) []byte {
	dst = appendRun(dst, r.Run, r.Status, r.Epoch)
	dst = append(dst, `,"pending":[`...)
	for i, k := range r.Pending {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendString(dst, string(k))
	}
	dst = append(dst, ']')
	if r.DeadlineMs != 0 {
		dst = appendInt(dst, "deadline_ms", int64(r.DeadlineMs), false)
	}
	if e := r.Effect; e != nil {
		dst = append(dst, `,"effect":{`...)
		dst = appendStr(dst, "key", string(e.Key), true)
		dst = appendStr(dst, "status", e.Status.String(), false)
		if e.Epoch != 0 {
			dst = appendUint(dst, "epoch", e.Epoch, false)
		}
		if e.Gated {
			dst = append(dst, `,"gated":true`...)
		}
		if e.Approved {
			dst = append(dst, `,"approved":true`...)
		}
		if e.Outcome != core.OutcomeNone {
			dst = appendStr(dst, "outcome", e.Outcome.String(), false)
		}
		if e.Result != "" {
			dst = appendStr(dst, "result", e.Result, false)
		}
		dst = appendNote(dst, e.SinceMs, e.Description, e.ArgsDigest)
		if e.Reason != "" {
			dst = appendStr(dst, "reason", e.Reason, false)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// appendNote appends the members of a note that are set: since_ms, description,
// args_digest.
func appendNote(dst []byte, since core.Time, description, digest string) []byte {
	if since != 0 {
		dst = appendInt(dst, "since_ms", int64(since), false)
	}
	if description != "" {
		dst = appendStr(dst, "description", description, false)
	}
	if digest != "" {
		dst = appendStr(dst, "args_digest", digest, false)
	}
	return dst
}

// UnmarshalJSON reads r from its JSON object.
func (r *StatusResult) UnmarshalJSON(b []byte) error {
	var w struct {
		runWire
		Pending    []string `json:"pending"`
		DeadlineMs int64    `json:"deadline_ms"`
		Effect     *struct {
			Key      string `json:"key"`
			Status   string `json:"status"`
			Epoch    uint64 `json:"epoch"`
			Gated    bool   `json:"gated"`
			Approved bool   `json:"approved"`
			Outcome  string `json:"outcome"`
			Result   string `json:"result"`
			noteWire
			Reason string `json:"reason"`
		} `json:"effect"`
	}
	st, err := readRun(b, &w, &w.runWire)
	if err != nil {
		return err
	}
	x := StatusResult{Run: core.RunID(w.Run), Status: st, Epoch: w.Epoch, DeadlineMs: core.Time(w.DeadlineMs)}
	for _, k := range w.Pending {
		x.Pending = append(x.Pending, core.Key(k))
	}
	if e := w.Effect; e != nil {
		es, ok := parseName[core.EffectStatus](effectStatusNames, e.Status)
		if !ok && e.Status != "absent" {
			return badName("effect.status", e.Status)
		}
		x.Effect = &EffectResult{Key: core.Key(e.Key), Status: es, Epoch: e.Epoch, Gated: e.Gated, Approved: e.Approved, Result: e.Result,
			SinceMs: core.Time(e.SinceMs), Description: e.Description, ArgsDigest: e.ArgsDigest, Reason: e.Reason}
		if e.Outcome != "" {
			if x.Effect.Outcome, ok = core.ParseOutcome(e.Outcome); !ok {
				return badName("effect.outcome", e.Outcome)
			}
		}
	}
	*r = x
	return nil
}

// noteWire is the note part shared by status's effect and pending's approvals.
type noteWire struct {
	SinceMs     int64  `json:"since_ms"`
	Description string `json:"description"`
	ArgsDigest  string `json:"args_digest"`
}

// PendingResult answers pending: a page of the inbox, the pending approvals the
// token may decide, oldest first.
type PendingResult struct {
	Approvals []PendingApproval // nil when none
	// More: approvals follow the last one listed; ask again with Cursor.
	More   bool
	Cursor string // with More: where the next page begins (a pending request's cursor)
}

// PendingApproval is one pending approval as pending lists it.
type PendingApproval struct {
	Run         core.RunID
	Key         core.Key
	SinceMs     core.Time // when it became pending, on the gate's clock; 0: not known (then no age)
	AgeMs       int64     // how long it has been pending, on the gate's clock, with SinceMs
	Description string
	ArgsDigest  string
}

// Pos returns a's place in the inbox's order.
func (a *PendingApproval) Pos() core.InboxPos {
	return core.InboxPos{Since: a.SinceMs, Run: a.Run, Key: a.Key}
}

// AppendJSON appends r's JSON object to dst.
func (r *PendingResult) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"approvals":[`...)
	for i := range r.Approvals {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = r.Approvals[i].appendJSON(dst)
	}
	dst = append(dst, ']')
	dst = appendBool(dst, "more", r.More, false)
	if r.Cursor != "" {
		dst = appendStr(dst, "cursor", r.Cursor, false)
	}
	return append(dst, '}')
}

func (a *PendingApproval) appendJSON(dst []byte) []byte {
	dst = append(dst, '{')
	dst = appendStr(dst, "run", string(a.Run), true)
	dst = appendStr(dst, "key", string(a.Key), false)
	if a.SinceMs != 0 {
		dst = appendInt(dst, "since_ms", int64(a.SinceMs), false)
		dst = appendInt(dst, "age_ms", a.AgeMs, false)
	}
	dst = appendNote(dst, 0, a.Description, a.ArgsDigest)
	return append(dst, '}')
}

// pendingTrailerBytes bounds what follows the approvals of a pending answer line:
// `],"more":true,"cursor":"…"}}` with the longest cursor.
const pendingTrailerBytes = 48 + (2*10+RunBytesMax+KeyBytesMax)*4/3 + 4

// Fit cuts r's approvals to those an answer line with id holds in lineBytesMax bytes
// (its LF not counted), at least one, and, when approvals follow the last one kept,
// sets More and the Cursor of the next page. A server calls it on every page it
// answers, so that no answer line is longer than a request line may be.
func (r *PendingResult) Fit(id ID, lineBytesMax int) {
	size := len(`{"jsonrpc":"2.0","id":`) + len(id.AppendJSON(nil)) + len(`,"result":{"approvals":[`) + pendingTrailerBytes
	var scratch []byte
	for i := range r.Approvals {
		scratch = r.Approvals[i].appendJSON(scratch[:0])
		if size += len(scratch) + 1; size > lineBytesMax && i > 0 {
			r.Approvals, r.More = r.Approvals[:i], true
			break
		}
	}
	r.Cursor = ""
	if r.More && len(r.Approvals) > 0 {
		r.Cursor = string(AppendCursor(nil, r.Approvals[len(r.Approvals)-1].Pos()))
	}
}

// UnmarshalJSON reads r from its JSON object.
func (r *PendingResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Approvals []struct {
			Run   string `json:"run"`
			Key   string `json:"key"`
			AgeMs int64  `json:"age_ms"`
			noteWire
		} `json:"approvals"`
		More   bool   `json:"more"`
		Cursor string `json:"cursor"`
	}
	if err := strictJSON(b, &w); err != nil {
		return err
	}
	x := PendingResult{More: w.More, Cursor: w.Cursor}
	for _, a := range w.Approvals {
		x.Approvals = append(x.Approvals, PendingApproval{Run: core.RunID(a.Run), Key: core.Key(a.Key), SinceMs: core.Time(a.SinceMs),
			AgeMs: a.AgeMs, Description: a.Description, ArgsDigest: a.ArgsDigest})
	}
	*r = x
	return nil
}

// runWire is the run part shared by several results.
type runWire struct {
	Run    string `json:"run"`
	Status string `json:"status"`
	Epoch  uint64 `json:"epoch"`
}

// readRun unmarshals the result object b into w, whose run part is run, and reads the
// run's status.
func readRun(b []byte, w any, run *runWire) (st core.RunStatus, err error) {
	if err = strictJSON(b, w); err == nil {
		st, err = run.status()
	}
	return st, err
}

func (w runWire) status() (core.RunStatus, error) {
	st, ok := parseName[core.RunStatus](runStatusNames, w.Status)
	if !ok && w.Status != "none" {
		return 0, badName("status", w.Status)
	}
	return st, nil
}

func appendRun(dst []byte, run core.RunID, st core.RunStatus, epoch uint64) []byte {
	dst = append(dst, '{')
	dst = appendStr(dst, "run", string(run), true)
	dst = appendStr(dst, "status", st.String(), false)
	return appendUint(dst, "epoch", epoch, false)
}

// The core's names, indexed by value, for reading answers back.
var (
	runStatusNames    = enumNames[core.RunStatus]()
	effectStatusNames = enumNames[core.EffectStatus]()
	answerNames       = enumNames[core.Answer]()
	reasonNames       = enumNames[core.Reason]()
)

// enumNames returns the names of T's values, taken from the core's String, from 0 up
// to the first value the core calls "invalid": a value the core adds is on the wire
// at once.
func enumNames[T interface {
	~uint8
	String() string
}]() []string {
	var names []string
	for i := 0; i <= math.MaxUint8 && T(i).String() != "invalid"; i++ {
		names = append(names, T(i).String())
	}
	return names
}

// strictJSON unmarshals b, which must be a JSON object; unknown members are ignored.
func strictJSON(b []byte, v any) error {
	if b = bytes.TrimSpace(b); len(b) == 0 || b[0] != '{' {
		return errors.New("soundgate/proto: bad answer: result is not an object")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("soundgate/proto: bad answer: %w", err)
	}
	return nil
}

func badName(member, v string) error {
	return fmt.Errorf("soundgate/proto: bad answer: %s %q is not a name of this protocol version", member, v)
}
