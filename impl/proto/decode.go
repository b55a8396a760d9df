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
	keysStart int                 // index in Decoder.keys of this object's first key
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

const (
	expectValue = iota
	afterValue
	expectKey
)

// validate checks that b is exactly one JSON value with no duplicate keys, and records
// the members of the top-level object in d.top. It returns ErrParse or ErrDuplicateKey
// and the offset of the fault; a syntax error anywhere wins over a duplicate key.
func (d *Decoder) validate(b []byte) (*Error, int) {
	for i := range d.frames {
		d.frames[i] = frame{}
	}
	d.frames, d.keys, d.top = d.frames[:0], d.keys[:0], d.top[:0]
	dupAt := -1
	state := expectValue
	i := 0
	for {
		i = skipWS(b, i)
		switch state {
		case expectValue:
			if i >= len(b) {
				return ErrParse, i
			}
			if len(d.frames) == 1 && d.frames[0].obj {
				d.top[len(d.top)-1].val.start = i
			}
			if (b[i] == '{' || b[i] == '[') && len(d.frames) == DepthMax {
				return ErrParse, i
			}
			switch c := b[i]; {
			case c == '{':
				i = skipWS(b, i+1)
				if i < len(b) && b[i] == '}' {
					i++
					d.valueDone(i)
					state = afterValue
					continue
				}
				d.frames = append(d.frames, frame{obj: true, keysStart: len(d.keys)})
				state = expectKey
			case c == '[':
				i = skipWS(b, i+1)
				if i < len(b) && b[i] == ']' {
					i++
					d.valueDone(i)
					state = afterValue
					continue
				}
				d.frames = append(d.frames, frame{})
			case c == '"':
				end, _ := scanString(b, i)
				if end < 0 {
					return ErrParse, i
				}
				i = end
				d.valueDone(i)
				state = afterValue
			case c == 't', c == 'f', c == 'n':
				lit := "null"
				if c == 't' {
					lit = "true"
				} else if c == 'f' {
					lit = "false"
				}
				if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
					return ErrParse, i
				}
				i += len(lit)
				d.valueDone(i)
				state = afterValue
			case c == '-' || ('0' <= c && c <= '9'):
				end, _ := scanNumber(b, i)
				if end < 0 {
					return ErrParse, i
				}
				i = end
				d.valueDone(i)
				state = afterValue
			default:
				return ErrParse, i
			}
		case expectKey:
			if i >= len(b) || b[i] != '"' {
				return ErrParse, i
			}
			end, esc := scanString(b, i)
			if end < 0 {
				return ErrParse, i
			}
			k := member{key: span{i, end}, keyEsc: esc}
			f := &d.frames[len(d.frames)-1]
			if dupAt < 0 && d.isDup(b, f, k) {
				dupAt = i
			}
			d.keys = append(d.keys, k)
			if len(d.frames) == 1 {
				d.top = append(d.top, k)
			}
			i = skipWS(b, end)
			if i >= len(b) || b[i] != ':' {
				return ErrParse, i
			}
			i++
			state = expectValue
		case afterValue:
			if len(d.frames) == 0 {
				if i != len(b) {
					return ErrParse, i
				}
				if dupAt >= 0 {
					return ErrDuplicateKey, dupAt
				}
				return nil, -1
			}
			if i >= len(b) {
				return ErrParse, i
			}
			f := &d.frames[len(d.frames)-1]
			switch b[i] {
			case ',':
				i++
				if f.obj {
					state = expectKey
				} else {
					state = expectValue
				}
			case '}', ']':
				if f.obj != (b[i] == '}') {
					return ErrParse, i
				}
				d.keys = d.keys[:f.keysStart]
				*f = frame{}
				d.frames = d.frames[:len(d.frames)-1]
				i++
				d.valueDone(i)
			default:
				return ErrParse, i
			}
		}
	}
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

// valueDone records the end of a value if it is a member of the top-level object.
func (d *Decoder) valueDone(i int) {
	if len(d.frames) == 1 && d.frames[0].obj {
		d.top[len(d.top)-1].val.end = i
	}
}

// isDup reports whether key k repeats a key of the object f.
func (d *Decoder) isDup(b []byte, f *frame, k member) bool {
	keys := d.keys[f.keysStart:]
	if f.set == nil && len(keys) < smallObjectKeys {
		for _, o := range keys {
			if d.keyEqual(b, o, k) {
				return true
			}
		}
		return false
	}
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
	nFields
)

var fieldNames = [nFields]string{"version", "token", "run", "key", "epoch", "gated", "wait_ms", "timeout_ms", "decision", "outcome", "result"}

const (
	bit        = 1
	bVersion   = bit << fVersion
	bToken     = bit << fToken
	bRun       = bit << fRun
	bKey       = bit << fKey
	bEpoch     = bit << fEpoch
	bGated     = bit << fGated
	bWaitMs    = bit << fWaitMs
	bTimeoutMs = bit << fTimeoutMs
	bDecision  = bit << fDecision
	bOutcome   = bit << fOutcome
	bResult    = bit << fResult
)

// methodFields gives, per method, the params members it allows and those it requires.
var methodFields = [...]struct{ allowed, required uint16 }{
	MethodHello:    {bVersion | bToken, bVersion | bToken},
	MethodOpen:     {bRun | bTimeoutMs, bRun},
	MethodAdmit:    {bRun | bKey | bEpoch | bGated | bWaitMs, bRun | bKey | bEpoch},
	MethodDecide:   {bRun | bKey | bDecision, bRun | bKey | bDecision},
	MethodComplete: {bRun | bKey | bOutcome | bResult, bRun | bKey | bOutcome},
	MethodCancel:   {bRun, bRun},
	MethodFence:    {bRun, bRun},
	MethodStatus:   {bRun | bKey, bRun},
}

// paramNames are the fields' names as DecodeError.Field gives them.
var paramNames = func() (n [nFields]string) {
	for f, name := range fieldNames {
		n[f] = "params." + name
	}
	return n
}()

var topNames = [...]string{"jsonrpc", "id", "method", "params"}

// interpret reads the envelope and params of the valid JSON line b (d.top is set).
func (d *Decoder) interpret(b []byte, req *Request) error {
	i := skipWS(b, 0)
	if b[i] != '{' {
		return &DecodeError{Err: ErrInvalidRequest, Offset: i, Detail: "not a JSON object"}
	}
	var idx [len(topNames)]int
	for j := range idx {
		idx[j] = -1
	}
	unknown := -1
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
			idx[k] = j
		} else if unknown < 0 {
			unknown = j
		}
	}
	d.scratch = d.scratch[:0]

	// The id, first: every later error carries it.
	if idx[1] < 0 {
		return &DecodeError{Err: ErrInvalidRequest, Field: "id", Offset: -1, Detail: "missing (notifications are not supported)"}
	}
	idm := d.top[idx[1]]
	idv := b[idm.val.start:idm.val.end]
	var idRef strRef
	switch c := idv[0]; {
	case c == '"':
		idRef = d.decodeString(idv)
		if idRef.n > IDBytesMax {
			return &DecodeError{Err: ErrInvalidRequest, Field: "id", Offset: idm.val.start, Detail: "string id longer than 64 bytes"}
		}
		req.ID = ID{Kind: IDString}
	case c == '-' || ('0' <= c && c <= '9'):
		if _, integer := scanNumber(idv, 0); !integer {
			return &DecodeError{Err: ErrInvalidRequest, Field: "id", Offset: idm.val.start, Detail: "id is not an integer"}
		}
		n, ok := parseInt(idv)
		if !ok {
			return &DecodeError{Err: ErrInvalidRequest, Field: "id", Offset: idm.val.start, Detail: "integer id beyond 2^53-1"}
		}
		req.ID = IntID(n)
	default:
		return &DecodeError{Err: ErrInvalidRequest, Field: "id", Offset: idm.val.start, Detail: "id must be an integer or a string"}
	}
	fail := func(kind *Error, fieldName string, at int, detail string) error {
		if req.ID.Kind == IDString {
			req.ID.Str = string(d.scratch[idRef.off : idRef.off+idRef.n])
		}
		return &DecodeError{Err: kind, ID: req.ID, Field: fieldName, Offset: at, Detail: detail}
	}

	if unknown >= 0 {
		m := d.top[unknown]
		return fail(ErrInvalidRequest, truncName(d.keyBytes(b, m, &d.tmpA)), m.key.start, "unknown member")
	}
	if idx[0] < 0 {
		return fail(ErrInvalidRequest, "jsonrpc", -1, "missing")
	}
	if m := d.top[idx[0]]; !unescapedEqual(b[m.val.start:m.val.end], hasBackslash(b[m.val.start:m.val.end]), "2.0") {
		return fail(ErrInvalidRequest, "jsonrpc", m.val.start, `must be "2.0"`)
	}
	if idx[2] < 0 {
		return fail(ErrInvalidRequest, "method", -1, "missing")
	}
	mm := d.top[idx[2]]
	mv := b[mm.val.start:mm.val.end]
	if mv[0] != '"' {
		return fail(ErrInvalidRequest, "method", mm.val.start, "must be a string")
	}
	esc := hasBackslash(mv)
	for _, m := range Methods {
		if unescapedEqual(mv, esc, methodNames[m]) {
			req.Method = m
			break
		}
	}
	if req.Method == MethodNone {
		return fail(ErrUnknownMethod, "method", mm.val.start, string(appendString(nil, truncName(d.stringBytes(mv, &d.tmpA))))+" is not a method of protocol version 1")
	}
	if idx[3] < 0 {
		return fail(ErrMissingField, "params", -1, "missing")
	}
	pm := d.top[idx[3]]
	if b[pm.val.start] != '{' {
		return fail(ErrWrongType, "params", pm.val.start, "must be an object")
	}

	spec := methodFields[req.Method]
	var seen uint16
	var refs [nFields]strRef
	j := pm.val.start + 1
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
			return fail(ErrUnknownField, "params."+truncName(d.keyBytes(b, member{key: span{kStart, kEnd}, keyEsc: kEsc}, &d.tmpA)), kStart, "not a field of "+req.Method.String())
		}
		seen |= bit << f
		v := b[vStart:vEnd]
		fname := paramNames[f]
		switch f {
		case fToken, fRun, fKey, fResult:
			if v[0] != '"' {
				return fail(ErrWrongType, fname, vStart, "must be a string")
			}
			r := d.decodeString(v)
			lo, hi := 1, 0
			switch f {
			case fToken:
				hi = TokenBytesMax
			case fRun:
				hi = RunBytesMax
			case fKey:
				hi = KeyBytesMax
			case fResult:
				lo, hi = 0, ResultBytesMax
			}
			if r.n < lo || r.n > hi {
				return fail(ErrOutOfRange, fname, vStart, lengthDetail(lo, hi))
			}
			refs[f] = r
		case fVersion, fEpoch, fWaitMs, fTimeoutMs:
			if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
				return fail(ErrWrongType, fname, vStart, "must be an integer")
			}
			if _, integer := scanNumber(v, 0); !integer {
				return fail(ErrWrongType, fname, vStart, "must be an integer, not a fraction or exponent")
			}
			n, ok := parseInt(v)
			var lo, hi int64 = 1, IntMax
			switch f {
			case fWaitMs:
				lo, hi = 0, WaitMsMax
			case fTimeoutMs:
				hi = TimeoutMsMax
			}
			if !ok || n < lo || n > hi {
				return fail(ErrOutOfRange, fname, vStart, rangeDetail(lo, hi))
			}
			switch f {
			case fVersion:
				req.Version = n
			case fEpoch:
				req.Epoch = uint64(n)
			case fWaitMs:
				req.WaitMs = n
			case fTimeoutMs:
				req.TimeoutMs = n
			}
		case fGated:
			switch v[0] {
			case 't':
				req.Gated = true
			case 'f':
				req.Gated = false
			default:
				return fail(ErrWrongType, fname, vStart, "must be true or false")
			}
		case fDecision, fOutcome:
			if v[0] != '"' {
				return fail(ErrWrongType, fname, vStart, "must be a string")
			}
			e := hasBackslash(v)
			if f == fDecision {
				switch {
				case unescapedEqual(v, e, "approve"):
					req.Decision = core.Approve
				case unescapedEqual(v, e, "reject"):
					req.Decision = core.Reject
				default:
					return fail(ErrOutOfRange, fname, vStart, `must be "approve" or "reject"`)
				}
			} else {
				switch {
				case unescapedEqual(v, e, "ok"):
					req.Outcome = core.OutcomeOK
				case unescapedEqual(v, e, "failed"):
					req.Outcome = core.OutcomeFailed
				default:
					return fail(ErrOutOfRange, fname, vStart, `must be "ok" or "failed"`)
				}
			}
		}
	}
	if missing := spec.required &^ seen; missing != 0 {
		for t := field(0); t < nFields; t++ {
			if missing&(bit<<t) != 0 {
				return fail(ErrMissingField, paramNames[t], -1, "required by "+req.Method.String())
			}
		}
	}

	// One allocation for every string of the request.
	if len(d.scratch) > 0 {
		s := string(d.scratch)
		get := func(r strRef) string { return s[r.off : r.off+r.n] }
		if req.ID.Kind == IDString {
			req.ID.Str = get(idRef)
		}
		req.Token = get(refs[fToken])
		req.Run = core.RunID(get(refs[fRun]))
		req.Key = core.Key(get(refs[fKey]))
		req.Result = get(refs[fResult])
	}
	return nil
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
