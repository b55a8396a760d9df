package proto

import (
	"bytes"
	"unicode/utf8"

	"github.com/soundgate/soundgate/impl/core"
)

// smallObjectKeys is how many members an object may have before the duplicate-key
// check switches from pairwise comparison (no allocation) to a set (bounded time).
const smallObjectKeys = 16

type span struct{ start, end int }

// member is one member of an object: its key literal (with quotes) and its value.
type member struct {
	key    span
	keyEsc bool // the key literal contains an escape
	val    span
}

type frame struct {
	obj       bool
	keysStart int                 // len(Decoder.keys) when the container opened; closing it drops the keys after
	set       map[string]struct{} // built once the object has smallObjectKeys keys
}

// strRef locates a decoded string in Decoder.scratch.
type strRef struct{ off, n int }

// Decoder decodes request lines. Keep one per connection: it reuses its buffers, so
// that decoding a request allocates only one string (holding all of its string
// fields). The zero value is ready to use. A Decoder is not safe for concurrent use.
type Decoder struct {
	frames  []frame
	keys    []member
	top     []member
	scratch []byte
	tmpA    []byte
	tmpB    []byte
	dupAt   int      // offset of the line's first duplicate key, or -1
	env     envelope // where the envelope's members are in top
}

// Decode decodes one request line with a fresh Decoder. See Decoder.Decode.
func Decode(line []byte) (Request, error) {
	var d Decoder
	var r Request
	err := d.Decode(line, &r)
	return r, err
}

// Decode decodes one request line into req. The line may end in LF or CRLF; nothing
// else may follow the JSON object. On success req holds the request and its string
// fields do not alias line. On failure req is zeroed except req.ID, which holds the
// id when it could be read, and the error is a *DecodeError: errors.Is(err,
// ErrWrongType) tells the kind, errors.As gives the id and the field. When a line has
// several faults, the first in this order is reported (docs/protocol.md, "Errors"):
// line too long, invalid UTF-8, JSON syntax, duplicate key, envelope (id first, then
// unknown members, jsonrpc, method), unknown method, params (the first faulty member
// in order of appearance), missing fields.
func (d *Decoder) Decode(line []byte, req *Request) error {
	*req = Request{}
	line = trimEOL(line)
	if len(line) > LineBytesMax {
		return &DecodeError{Err: ErrLineTooLong, Offset: LineBytesMax, Detail: "over the line limit"}
	}
	if !utf8.Valid(line) {
		return &DecodeError{Err: ErrInvalidUTF8, Offset: invalidUTF8At(line)}
	}
	if kind, at := d.validate(line); kind != nil {
		de := &DecodeError{Err: kind, Offset: at}
		if kind == ErrDuplicateKey {
			de.ID = d.recoverID(line)
			req.ID = de.ID
		}
		return de
	}
	err := d.interpret(line, req)
	if err != nil {
		id := req.ID
		*req = Request{ID: id}
	}
	return err
}

// trimEOL drops one trailing LF, then one trailing CR.
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return -1
}

// The states of validate's scan.
const (
	syntaxError = iota // from openContainer or closeContainer: ErrParse at the offset returned with it
	expectValue
	afterValue
	expectKey
)

// validate checks that b is exactly one JSON value with no duplicate keys, and records
// the members of the top-level object in d.top. It returns ErrParse or ErrDuplicateKey
// and the offset of the fault; a syntax error anywhere wins over a duplicate key.
// It is the decoder's hot loop: scalars and punctuation are read here, and only a key
// or a bracket costs a call.
func (d *Decoder) validate(b []byte) (*Error, int) {
	d.reset()
	state := expectValue
	i := 0
	for {
		i = skipWS(b, i)
		if state == afterValue && len(d.frames) == 0 {
			return d.verdict(b, i)
		}
		if i >= len(b) {
			return ErrParse, i // the line ends inside the value
		}
		switch state {
		case expectValue:
			d.valueStart(i)
			var end int
			switch c := b[i]; {
			case c == '{' || c == '[':
				if i, state = d.openContainer(b, i); state == syntaxError {
					return ErrParse, i
				}
				continue
			case c == '"':
				end, _ = scanString(b, i)
			case c == 't', c == 'f', c == 'n':
				end = scanLiteral(b, i)
			case c == '-' || ('0' <= c && c <= '9'):
				end, _ = scanNumber(b, i)
			default:
				return ErrParse, i
			}
			if end < 0 {
				return ErrParse, i
			}
			i = end
			d.valueDone(i)
			state = afterValue
		case expectKey:
			if b[i] != '"' {
				return ErrParse, i
			}
			end, esc := scanString(b, i)
			if end < 0 {
				return ErrParse, i
			}
			d.addKey(b, member{key: span{i, end}, keyEsc: esc})
			if i = skipWS(b, end); i >= len(b) || b[i] != ':' {
				return ErrParse, i
			}
			i++
			state = expectValue
		case afterValue:
			switch b[i] {
			case ',':
				i++
				state = expectValue
				if d.frames[len(d.frames)-1].obj {
					state = expectKey
				}
			case '}', ']':
				if i, state = d.closeContainer(b, i); state == syntaxError {
					return ErrParse, i
				}
			default:
				return ErrParse, i
			}
		}
	}
}

// reset empties the scan's state. The frames a refused line left open are cleared too,
// so that their key sets can be collected.
func (d *Decoder) reset() {
	for i := range d.frames {
		d.frames[i] = frame{}
	}
	d.frames, d.keys, d.top = d.frames[:0], d.keys[:0], d.top[:0]
	d.dupAt = -1
}

// verdict is validate's result once the top-level value ends before b[i].
func (d *Decoder) verdict(b []byte, i int) (*Error, int) {
	if i != len(b) {
		return ErrParse, i
	}
	if d.dupAt >= 0 {
		return ErrDuplicateKey, d.dupAt
	}
	return nil, -1
}

// openContainer reads the '{' or '[' at b[i]: an empty container whole, else the
// opening of the frame of its members. It returns where the scan goes on and in which
// state.
func (d *Decoder) openContainer(b []byte, i int) (int, int) {
	if len(d.frames) == DepthMax {
		return i, syntaxError
	}
	obj := b[i] == '{'
	closer := byte(']')
	if obj {
		closer = '}'
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == closer {
		i++
		d.valueDone(i)
		return i, afterValue
	}
	d.frames = append(d.frames, frame{obj: obj, keysStart: len(d.keys)})
	if !obj {
		return i, expectValue
	}
	return i, expectKey
}

// closeContainer reads the '}' or ']' at b[i], which must close the innermost
// container, and pops its frame, dropping its keys. It returns where the scan goes on
// and in which state.
func (d *Decoder) closeContainer(b []byte, i int) (int, int) {
	f := &d.frames[len(d.frames)-1]
	if f.obj != (b[i] == '}') {
		return i, syntaxError
	}
	d.keys = d.keys[:f.keysStart]
	*f = frame{}
	d.frames = d.frames[:len(d.frames)-1]
	i++
	d.valueDone(i)
	return i, afterValue
}

// recoverID returns the id of the syntactically valid line b if its top level is an
// object with exactly one member "id" holding a valid id, and the null id otherwise.
func (d *Decoder) recoverID(b []byte) ID {
	if b[skipWS(b, 0)] != '{' {
		return ID{}
	}
	found := -1
	for j, m := range d.top {
		if string(d.keyBytes(b, m, &d.tmpA)) == "id" {
			if found >= 0 {
				return ID{}
			}
			found = j
		}
	}
	if found < 0 {
		return ID{}
	}
	id, ok := parseID(b[d.top[found].val.start:d.top[found].val.end], &d.tmpA)
	if !ok {
		return ID{}
	}
	if id.Kind == IDString {
		id.Str = string(d.tmpA)
	}
	return id
}

// parseID reads an id value. A string id is decoded into *tmp and id.Str is left
// empty: the caller makes the string. ok is false if v is not a valid id.
func parseID(v []byte, tmp *[]byte) (id ID, ok bool) {
	switch c := v[0]; {
	case c == '"':
		*tmp = unescape((*tmp)[:0], v)
		return ID{Kind: IDString}, len(*tmp) <= IDBytesMax
	case c == '-' || ('0' <= c && c <= '9'):
		if _, integer := scanNumber(v, 0); !integer {
			return ID{}, false
		}
		n, ok := parseInt(v)
		return IntID(n), ok
	}
	return ID{}, false
}

// valueStart records the start of a value if it is a member of the top-level object.
func (d *Decoder) valueStart(i int) {
	if len(d.frames) == 1 && d.frames[0].obj {
		d.top[len(d.top)-1].val.start = i
	}
}

// valueDone records the end of a value if it is a member of the top-level object.
func (d *Decoder) valueDone(i int) {
	if len(d.frames) == 1 && d.frames[0].obj {
		d.top[len(d.top)-1].val.end = i
	}
}

// addKey records the key k of the innermost object f and, until the line's first
// duplicate key is found, checks k against f's keys: pairwise while f has fewer than
// smallObjectKeys (no allocation), then with a set (bounded time).
func (d *Decoder) addKey(b []byte, k member) {
	f := &d.frames[len(d.frames)-1]
	if d.dupAt < 0 {
		if keys := d.keys[f.keysStart:]; f.set == nil && len(keys) < smallObjectKeys {
			for _, o := range keys {
				if d.keyEqual(b, o, k) {
					d.dupAt = k.key.start
					break
				}
			}
		} else if d.inKeySet(b, f, keys, k) {
			d.dupAt = k.key.start
		}
	}
	d.keys = append(d.keys, k)
	if len(d.frames) == 1 {
		d.top = append(d.top, k)
	}
}

// inKeySet reports whether k is in the key set of the object f, built from its keys
// on first use, and adds it.
func (d *Decoder) inKeySet(b []byte, f *frame, keys []member, k member) bool {
	if f.set == nil {
		f.set = make(map[string]struct{}, 2*len(keys))
		for _, o := range keys {
			f.set[string(d.keyBytes(b, o, &d.tmpA))] = struct{}{}
		}
	}
	kb := d.keyBytes(b, k, &d.tmpA)
	if _, ok := f.set[string(kb)]; ok {
		return true
	}
	f.set[string(kb)] = struct{}{}
	return false
}

func (d *Decoder) keyEqual(b []byte, x, y member) bool {
	if !x.keyEsc && !y.keyEsc {
		return bytes.Equal(b[x.key.start:x.key.end], b[y.key.start:y.key.end])
	}
	return bytes.Equal(d.keyBytes(b, x, &d.tmpA), d.keyBytes(b, y, &d.tmpB))
}

// keyBytes returns the decoded name of m's key, using *tmp as a buffer if it must.
func (d *Decoder) keyBytes(b []byte, m member, tmp *[]byte) []byte {
	lit := b[m.key.start:m.key.end]
	if !m.keyEsc {
		return lit[1 : len(lit)-1]
	}
	*tmp = unescape((*tmp)[:0], lit)
	return *tmp
}

// field is a member of params.
type field uint8

const (
	fVersion field = iota
	fToken
	fRun
	fKey
	fEpoch
	fGated
	fWaitMs
	fTimeoutMs
	fDecision
	fOutcome
	fResult
	fDescription
	fArgsDigest
	fReason
	fLimit
	fCursor
	nFields
)

var fieldNames = [nFields]string{"version", "token", "run", "key", "epoch", "gated", "wait_ms", "timeout_ms", "decision", "outcome", "result",
	"description", "args_digest", "reason", "limit", "cursor"}

const (
	bit          = 1
	bVersion     = bit << fVersion
	bToken       = bit << fToken
	bRun         = bit << fRun
	bKey         = bit << fKey
	bEpoch       = bit << fEpoch
	bGated       = bit << fGated
	bWaitMs      = bit << fWaitMs
	bTimeoutMs   = bit << fTimeoutMs
	bDecision    = bit << fDecision
	bOutcome     = bit << fOutcome
	bResult      = bit << fResult
	bDescription = bit << fDescription
	bArgsDigest  = bit << fArgsDigest
	bReason      = bit << fReason
	bLimit       = bit << fLimit
	bCursor      = bit << fCursor
)

// methodFields gives, per method, the params members it allows and those it requires.
var methodFields = [...]struct{ allowed, required uint16 }{
	MethodHello:    {bVersion | bToken, bVersion | bToken},
	MethodOpen:     {bRun | bTimeoutMs, bRun},
	MethodAdmit:    {bRun | bKey | bEpoch | bGated | bWaitMs | bDescription | bArgsDigest, bRun | bKey | bEpoch},
	MethodDecide:   {bRun | bKey | bDecision | bReason, bRun | bKey | bDecision},
	MethodComplete: {bRun | bKey | bOutcome | bResult, bRun | bKey | bOutcome},
	MethodCancel:   {bRun | bReason, bRun},
	MethodFence:    {bRun | bReason, bRun},
	MethodStatus:   {bRun | bKey, bRun},
	MethodPending:  {bLimit | bCursor, 0},
	MethodWatch:    {0, 0},
	MethodUnwatch:  {0, 0},
}

// fieldRange gives the range lo..hi of each integer field's value and of each string
// field's length in bytes (docs/protocol.md, "Limits"); Decode and Validate both use it.
var fieldRange = [nFields]struct{ lo, hi int64 }{
	fVersion:   {1, IntMax},
	fToken:     {1, TokenBytesMax},
	fRun:       {1, RunBytesMax},
	fKey:       {1, KeyBytesMax},
	fEpoch:     {1, IntMax},
	fWaitMs:    {0, WaitMsMax},
	fTimeoutMs: {1, TimeoutMsMax},
	fResult:    {0, ResultBytesMax},
	// The texts of a note, then checked by checkText.
	fDescription: {0, DescriptionBytesMax},
	fArgsDigest:  {1, ArgsDigestBytesMax},
	fReason:      {0, ReasonBytesMax},
	fLimit:       {1, PendingLimitMax},
	fCursor:      {1, CursorBytesMax},
}

// paramNames are the fields' names as DecodeError.Field gives them.
var paramNames = func() (n [nFields]string) {
	for f, name := range fieldNames {
		n[f] = "params." + name
	}
	return n
}()

// firstField returns the first field, in the order of fieldNames, whose bit is set in
// the non-zero mask (a set of fields' bits).
func firstField(mask uint16) field {
	for f := field(0); f < nFields; f++ {
		if mask&(bit<<f) != 0 {
			return f
		}
	}
	return nFields
}

// The members of the envelope, as indexes of topNames.
const (
	topJSONRPC = iota
	topID
	topMethod
	topParams
)

var topNames = [...]string{"jsonrpc", "id", "method", "params"}

// envelope locates the members of the top-level object.
type envelope struct {
	at      [len(topNames)]int // the index in Decoder.top of each of topNames, or -1
	unknown int                // the index in Decoder.top of the first other member, or -1
}

// fault is the error for a line whose id is not known yet (interpret adds it).
func fault(kind *Error, field string, at int, detail string) *DecodeError {
	return &DecodeError{Err: kind, Field: field, Offset: at, Detail: detail}
}

// interpret reads the envelope and params of the valid JSON line b (d.top is set).
func (d *Decoder) interpret(b []byte, req *Request) error {
	i := skipWS(b, 0)
	if b[i] != '{' {
		return &DecodeError{Err: ErrInvalidRequest, Offset: i, Detail: "not a JSON object"}
	}
	d.findMembers(b)
	d.scratch = d.scratch[:0]

	// The id, first: every later error carries it.
	idRef, de := d.readID(b, req)
	if de != nil {
		return de
	}
	var refs [nFields]strRef
	de = d.readEnvelope(b, req)
	if de == nil {
		de = d.readParams(b, req, &refs)
	}
	if de != nil {
		if req.ID.Kind == IDString {
			req.ID.Str = string(d.scratch[idRef.off : idRef.off+idRef.n])
		}
		de.ID = req.ID
		return de
	}
	d.setStrings(req, idRef, &refs)
	return nil
}

// findMembers locates the envelope's members in d.top by name, into d.env.
func (d *Decoder) findMembers(b []byte) {
	env := &d.env
	for j := range env.at {
		env.at[j] = -1
	}
	env.unknown = -1
	for j, m := range d.top {
		name := d.keyBytes(b, m, &d.tmpA)
		k := -1
		for t, n := range topNames {
			if string(name) == n {
				k = t
				break
			}
		}
		if k >= 0 {
			env.at[k] = j
		} else if env.unknown < 0 {
			env.unknown = j
		}
	}
}

// readID reads the id into req.ID. A string id is decoded into d.scratch, where the
// returned strRef locates it.
func (d *Decoder) readID(b []byte, req *Request) (strRef, *DecodeError) {
	at := d.env.at[topID]
	if at < 0 {
		return strRef{}, fault(ErrInvalidRequest, "id", -1, "missing (notifications are not supported)")
	}
	m := d.top[at]
	v := b[m.val.start:m.val.end]
	switch c := v[0]; {
	case c == '"':
		r := d.decodeString(v)
		if r.n > IDBytesMax {
			return strRef{}, fault(ErrInvalidRequest, "id", m.val.start, "string id longer than 64 bytes")
		}
		req.ID = ID{Kind: IDString}
		return r, nil
	case c == '-' || ('0' <= c && c <= '9'):
		if _, integer := scanNumber(v, 0); !integer {
			return strRef{}, fault(ErrInvalidRequest, "id", m.val.start, "id is not an integer")
		}
		n, ok := parseInt(v)
		if !ok {
			return strRef{}, fault(ErrInvalidRequest, "id", m.val.start, "integer id beyond 2^53-1")
		}
		req.ID = IntID(n)
		return strRef{}, nil
	}
	return strRef{}, fault(ErrInvalidRequest, "id", m.val.start, "id must be an integer or a string")
}

// readEnvelope checks the members around params, in the order of docs/protocol.md: no
// unknown member, jsonrpc "2.0", a method of the protocol (into req.Method), params an
// object.
func (d *Decoder) readEnvelope(b []byte, req *Request) *DecodeError {
	env := &d.env
	if env.unknown >= 0 {
		m := d.top[env.unknown]
		return fault(ErrInvalidRequest, truncName(d.keyBytes(b, m, &d.tmpA)), m.key.start, "unknown member")
	}
	if env.at[topJSONRPC] < 0 {
		return fault(ErrInvalidRequest, "jsonrpc", -1, "missing")
	}
	if m := d.top[env.at[topJSONRPC]]; !isVersion2(b[m.val.start:m.val.end]) {
		return fault(ErrInvalidRequest, "jsonrpc", m.val.start, `must be "2.0"`)
	}
	if de := d.readMethod(b, env.at[topMethod], req); de != nil {
		return de
	}
	if env.at[topParams] < 0 {
		return fault(ErrMissingField, "params", -1, "missing")
	}
	if at := d.top[env.at[topParams]].val.start; b[at] != '{' {
		return fault(ErrWrongType, "params", at, "must be an object")
	}
	return nil
}

// isVersion2 reports whether the value v is the string "2.0"; unescapedEqual wants a
// string literal, and the array [2.0] has the same inside.
func isVersion2(v []byte) bool {
	return v[0] == '"' && unescapedEqual(v, hasBackslash(v), "2.0")
}

// readMethod reads the method, the member d.top[at], into req.Method.
func (d *Decoder) readMethod(b []byte, at int, req *Request) *DecodeError {
	if at < 0 {
		return fault(ErrInvalidRequest, "method", -1, "missing")
	}
	m := d.top[at]
	v := b[m.val.start:m.val.end]
	if v[0] != '"' {
		return fault(ErrInvalidRequest, "method", m.val.start, "must be a string")
	}
	esc := hasBackslash(v)
	for _, meth := range Methods {
		if unescapedEqual(v, esc, methodNames[meth]) {
			req.Method = meth
			return nil
		}
	}
	return fault(ErrUnknownMethod, "method", m.val.start, string(appendString(nil, truncName(d.stringBytes(v, &d.tmpA))))+" is not a method of protocol version 1")
}

// readParams reads the members of the params object into req, in order of appearance
// (strings into d.scratch, where refs locates them), checking each value against its
// type and fieldRange, then checks that no required member is missing. Strings and
// integers are read here, without a call per member: this loop is on the hot path.
func (d *Decoder) readParams(b []byte, req *Request, refs *[nFields]strRef) *DecodeError {
	spec := methodFields[req.Method]
	var seen uint16
	j := d.top[d.env.at[topParams]].val.start + 1
	for {
		j = skipWS(b, j)
		if b[j] == '}' {
			break
		}
		kStart := j
		kEnd, kEsc := scanString(b, j)
		name := b[kStart:kEnd]
		f := nFields
		for t := field(0); t < nFields; t++ {
			if spec.allowed&(bit<<t) != 0 && unescapedEqual(name, kEsc, fieldNames[t]) {
				f = t
				break
			}
		}
		j = skipWS(b, kEnd) + 1 // ':'
		vStart := skipWS(b, j)
		vEnd := skipValue(b, vStart)
		j = skipWS(b, vEnd)
		if b[j] == ',' {
			j++
		}
		if f == nFields {
			return fault(ErrUnknownField, "params."+truncName(d.keyBytes(b, member{key: span{kStart, kEnd}, keyEsc: kEsc}, &d.tmpA)), kStart, "not a field of "+req.Method.String())
		}
		seen |= bit << f
		v := b[vStart:vEnd]
		lim := fieldRange[f]
		switch f {
		case fToken, fRun, fKey, fResult, fDescription, fArgsDigest, fReason, fCursor:
			if v[0] != '"' {
				return fault(ErrWrongType, paramNames[f], vStart, "must be a string")
			}
			r := d.decodeString(v)
			if int64(r.n) < lim.lo || int64(r.n) > lim.hi {
				return fault(ErrOutOfRange, paramNames[f], vStart, lengthDetail(lim.lo, lim.hi))
			}
			if f >= fDescription {
				if err := checkText(f, string(d.scratch[r.off:r.off+r.n])); err != nil {
					return fault(ErrOutOfRange, paramNames[f], vStart, err.Error())
				}
			}
			refs[f] = r
		case fVersion, fEpoch, fWaitMs, fTimeoutMs, fLimit:
			if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
				return fault(ErrWrongType, paramNames[f], vStart, "must be an integer")
			}
			if _, integer := scanNumber(v, 0); !integer {
				return fault(ErrWrongType, paramNames[f], vStart, "must be an integer, not a fraction or exponent")
			}
			n, ok := parseInt(v)
			if !ok || n < lim.lo || n > lim.hi {
				return fault(ErrOutOfRange, paramNames[f], vStart, rangeDetail(lim.lo, lim.hi))
			}
			req.setInt(f, n)
		case fGated:
			if de := readGated(v, vStart, req); de != nil {
				return de
			}
		case fDecision, fOutcome:
			if de := readChoice(f, v, vStart, req); de != nil {
				return de
			}
		}
	}
	if missing := spec.required &^ seen; missing != 0 {
		return fault(ErrMissingField, paramNames[firstField(missing)], -1, "required by "+req.Method.String())
	}
	return nil
}

// readGated reads the value v, at offset at, of the member gated into req.
func readGated(v []byte, at int, req *Request) *DecodeError {
	switch v[0] {
	case 't':
		req.Gated = true
	case 'f':
		req.Gated = false
	default:
		return fault(ErrWrongType, paramNames[fGated], at, "must be true or false")
	}
	return nil
}

// setInt stores n in req's integer field f.
func (req *Request) setInt(f field, n int64) {
	switch f {
	case fVersion:
		req.Version = n
	case fEpoch:
		req.Epoch = uint64(n)
	case fWaitMs:
		req.WaitMs = n
	case fTimeoutMs:
		req.TimeoutMs = n
	case fLimit:
		req.Limit = n
	}
}

// checkText checks the value of a string field whose content has rules beyond its
// length (a note's texts, a cursor): the error says why it is out of range.
func checkText(f field, s string) error {
	switch f {
	case fDescription:
		return core.CheckNoteText(s, DescriptionBytesMax)
	case fArgsDigest:
		return core.CheckArgsDigest(s)
	case fReason:
		return core.CheckNoteText(s, ReasonBytesMax)
	case fCursor:
		_, err := ParseCursor(s)
		return err
	}
	return nil
}

// readChoice reads the value v of the decision or the outcome (f) into req.
func readChoice(f field, v []byte, at int, req *Request) *DecodeError {
	if v[0] != '"' {
		return fault(ErrWrongType, paramNames[f], at, "must be a string")
	}
	e := hasBackslash(v)
	if f == fDecision {
		for _, d := range [...]core.Decision{core.Approve, core.Reject} {
			if unescapedEqual(v, e, d.String()) {
				req.Decision = d
				return nil
			}
		}
		return fault(ErrOutOfRange, paramNames[f], at, `must be "approve" or "reject"`)
	}
	for _, o := range [...]core.Outcome{core.OutcomeOK, core.OutcomeFailed} {
		if unescapedEqual(v, e, o.String()) {
			req.Outcome = o
			return nil
		}
	}
	return fault(ErrOutOfRange, paramNames[f], at, `must be "ok" or "failed"`)
}

// setStrings makes every string of the request with one allocation.
func (d *Decoder) setStrings(req *Request, idRef strRef, refs *[nFields]strRef) {
	if len(d.scratch) == 0 {
		return
	}
	s := string(d.scratch)
	get := func(r strRef) string { return s[r.off : r.off+r.n] }
	if req.ID.Kind == IDString {
		req.ID.Str = get(idRef)
	}
	req.Token = get(refs[fToken])
	req.Run = core.RunID(get(refs[fRun]))
	req.Key = core.Key(get(refs[fKey]))
	req.Result = get(refs[fResult])
	req.Description = get(refs[fDescription])
	req.ArgsDigest = get(refs[fArgsDigest])
	req.Reason = get(refs[fReason])
	req.Cursor = get(refs[fCursor])
}

// decodeString decodes the JSON string literal v into d.scratch.
func (d *Decoder) decodeString(v []byte) strRef {
	off := len(d.scratch)
	if hasBackslash(v) {
		d.scratch = unescape(d.scratch, v)
	} else {
		d.scratch = append(d.scratch, v[1:len(v)-1]...)
	}
	return strRef{off, len(d.scratch) - off}
}

func (d *Decoder) stringBytes(v []byte, tmp *[]byte) []byte {
	*tmp = unescape((*tmp)[:0], v)
	return *tmp
}

func hasBackslash(b []byte) bool { return bytes.IndexByte(b, '\\') >= 0 }

// truncName returns name as a string, cut to at most NameBytesMax bytes on a rune
// boundary and marked with "..." if it was cut: the form an offending member's name
// takes in DecodeError.Field.
func truncName(name []byte) string {
	if len(name) <= NameBytesMax {
		return string(name)
	}
	cut := NameBytesMax
	for cut > 0 && !utf8.RuneStart(name[cut]) {
		cut--
	}
	return string(name[:cut]) + "..."
}
