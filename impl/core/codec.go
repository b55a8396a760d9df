package core

import (
	"encoding/binary"
	"errors"
	"slices"
	"strings"
)

// The binary encodings of a Command (a log record) and of the whole Gate (a snapshot).
// Both are deterministic: the same value always encodes to the same bytes.
//
// Command record (all integers are unsigned varints, strings are varint length + bytes):
//
//	+---------+----+-----+-----+-------+-------+----------+---------+--------+----------+-----+------+
//	| version | op | run | key | epoch | gated | decision | outcome | result | deadline | now | upto |
//	+---------+----+-----+-----+-------+-------+----------+---------+--------+----------+-----+------+
//
// upto is version 2's only: a Command without it is written as version 1, so that the
// log of a gate that keeps no watermark reads as it always did. A Command that
// carries a note (an Admit's description or args digest, a Decide's reason; never a
// Retire) is written as version 3, whose three strings follow now in place of upto:
//
//	+-----------+---- ... ----+-----+-------------+-------------+--------+
//	| version 3 | op ... now  | now | description | args digest | reason |
//	+-----------+---- ... ----+-----+-------------+-------------+--------+
//
// A Command that says who asked (By: a decide, a cancel or a fence from the wire)
// is written as version 4: version 3's three strings, then by.
//
// Every other Command keeps the bytes it always had, so that a log written before
// notes existed replays as it did, and one written after without notes is read by an
// older build.
//
// Checksums and framing are the log's business (impl/wal); this is the payload.

const (
	commandVersion = 2 // 2: upto follows now; 1 ends at now
	// commandNoteVersion: a note's three strings follow now (no upto).
	commandNoteVersion = 3
	// commandByVersion: version 3's strings, then by.
	commandByVersion = 4
	// snapshotVersion 2: the retired ids follow the count of runs (1 has none); 3: the
	// watermark comes before them (a gate with no watermark wrote version 2); 4: the
	// watermark is always there ("": none), and each effect ends with its note (a
	// byte 0, or 1 and the note: since, description, args digest, reason). A gate
	// writes version 4; it reads every version.
	snapshotVersion = 4
)

// ErrCodec reports bytes that do not decode to a Command or a snapshot.
var ErrCodec = errors.New("soundgate/core: malformed command or snapshot encoding")

// AppendCommand appends the encoding of c to buf.
func AppendCommand(buf []byte, c Command) []byte {
	version := uint64(1)
	note := c.Description != "" || c.ArgsDigest != "" || c.Reason != ""
	switch {
	case c.By != "":
		version = commandByVersion
	case note:
		version = commandNoteVersion
	case c.Upto:
		version = commandVersion
	}
	buf = binary.AppendUvarint(buf, version)
	buf = append(buf, byte(c.Op))
	buf = appendString(buf, string(c.Run))
	buf = appendString(buf, string(c.Key))
	buf = binary.AppendUvarint(buf, c.Epoch)
	buf = append(buf, boolByte(c.Gated), byte(c.Decision), byte(c.Outcome))
	buf = appendString(buf, c.Result)
	buf = binary.AppendUvarint(buf, uint64(c.Deadline))
	buf = binary.AppendUvarint(buf, uint64(c.Now))
	switch {
	case note || c.By != "":
		buf = appendString(buf, c.Description)
		buf = appendString(buf, c.ArgsDigest)
		buf = appendString(buf, c.Reason)
		if c.By != "" {
			buf = appendString(buf, c.By)
		}
	case c.Upto:
		buf = append(buf, 1)
	}
	return buf
}

// DecodeCommand decodes one Command encoded by AppendCommand; trailing bytes are an error.
func DecodeCommand(b []byte) (Command, error) {
	d := decoder{b: b}
	var c Command
	version := d.uvarint()
	if version < 1 || version > commandByVersion {
		return Command{}, ErrCodec
	}
	c.Op = Op(d.byte())
	c.Run = RunID(d.string())
	c.Key = Key(d.string())
	c.Epoch = d.uvarint()
	c.Gated = d.byte() == 1
	c.Decision = Decision(d.byte())
	c.Outcome = Outcome(d.byte())
	c.Result = d.string()
	c.Deadline = Time(d.uvarint())
	c.Now = Time(d.uvarint())
	switch version {
	case commandVersion:
		// written only when set, and only on a Retire: any other byte is malformed
		c.Upto = d.byte() == 1 && c.Op == OpRetire
		d.err = d.err || !c.Upto
	case commandNoteVersion:
		// written only when a note is there, one its op may carry (checkNote)
		c.Description, c.ArgsDigest, c.Reason = d.string(), d.string(), d.string()
		some := c.Description != "" || c.ArgsDigest != "" || c.Reason != ""
		d.err = d.err || !some || c.checkNote() != nil
	case commandByVersion:
		// written only with a by, on an op that may carry one
		c.Description, c.ArgsDigest, c.Reason, c.By = d.string(), d.string(), d.string(), d.string()
		d.err = d.err || c.By == "" || c.checkNote() != nil
	}
	if d.err || len(d.b) != 0 || !logged(c.Op) {
		return Command{}, ErrCodec
	}
	return c, nil
}

// logged reports whether op changes state and so may be a log record.
func logged(op Op) bool { return (op >= OpOpen && op <= OpTimeout) || op == OpRetire }

// MarshalBinary encodes the whole state of the gate (not its limits), runs sorted by
// id and effects by key. A snapshot written while the gate serves comes from a Cut
// (cut.go), in the same layout and through the same encoder, unsorted: the decoder
// reads runs and effects in any order, and a sort would stall a core on a large run.
func (g *Gate) MarshalBinary() ([]byte, error) {
	size := 16
	for _, run := range g.runs {
		size += len(run.ID) + 32 + len(run.effects)*24
	}
	retired := newRetiredCursor(g.retired.frozen(), g.upto)
	buf := appendSnapshotHeader(make([]byte, 0, size), len(g.runs), retired)
	for more := true; more; {
		buf, more = retired.appendNext(buf, retired.left)
	}
	var scratch []frozenEffect
	for _, id := range g.RunIDs() {
		var fr frozenRun
		fr, scratch = g.runs[id].freeze(scratch[:0], nil)
		slices.SortFunc(fr.effects, func(a, b frozenEffect) int { return strings.Compare(string(a.key), string(b.key)) })
		buf = appendRunHead(buf, fr)
		for _, f := range fr.effects {
			buf = appendEffect(buf, f)
		}
	}
	return buf, nil
}

// appendSnapshotHeader appends the snapshot's version, its count of runs, its
// watermark and its count of retired ids, which the ids follow (retiredCursor).
func appendSnapshotHeader(buf []byte, runs int, retired *retiredCursor) []byte {
	buf = binary.AppendUvarint(buf, snapshotVersion)
	buf = binary.AppendUvarint(buf, uint64(runs))
	buf = appendString(buf, string(retired.upto))
	return binary.AppendUvarint(buf, uint64(retired.left))
}

// retiredCursor encodes the retired ids of a snapshot sorted, a merge of the blocks
// (each sorted), so that equal states encode equally however their ids were grouped;
// a budget at a time, so that no buffer holds them all.
type retiredCursor struct {
	blocks []*retiredBlock
	at     []int
	left   int
	upto   RunID // the watermark, which the header carries
}

func newRetiredCursor(blocks []*retiredBlock, upto RunID) *retiredCursor {
	c := &retiredCursor{blocks: blocks, at: make([]int, len(blocks)), upto: upto}
	for _, b := range blocks {
		c.left += b.len()
	}
	return c
}

// appendNext appends up to budget ids (at least one, if any is left) and reports
// whether any is left.
func (c *retiredCursor) appendNext(buf []byte, budget int) ([]byte, bool) {
	for n := 0; c.left > 0 && (n == 0 || n < budget); n++ {
		best := 0
		for c.at[best] == c.blocks[best].len() {
			best++
		}
		for i := best + 1; i < len(c.blocks); i++ {
			if c.at[i] < c.blocks[i].len() && c.blocks[i].at(c.at[i]) < c.blocks[best].at(c.at[best]) {
				best = i
			}
		}
		buf = appendString(buf, string(c.blocks[best].at(c.at[best])))
		c.at[best]++
		c.left--
	}
	return buf, c.left > 0
}

// frozenRun is a run's state as a snapshot encodes it, copied out of the run's maps
// into a flat slice, so that it can be encoded after the run changed.
type frozenRun struct {
	id       RunID
	status   RunStatus
	epoch    uint64
	deadline Time
	count    int  // the run's effects: these, or all its slices' (cut.go)
	cont     bool // a slice after the first: no head
	effects  []frozenEffect
}

type frozenEffect struct {
	key     Key
	effect  Effect
	pending bool
}

// freeze copies run's state, its effects appended to into, and returns it and into.
// With saved (a cut's), it copies the run's state when the cut began: the header and
// the changed keys as saved, the other keys as they are.
func (run *Run) freeze(into []frozenEffect, saved *savedRun) (frozenRun, []frozenEffect) {
	start := len(into)
	fr := frozenRun{id: run.ID, status: run.Status, epoch: run.Epoch, deadline: run.Deadline}
	for k, e := range run.effects {
		if saved != nil {
			if _, changed := saved.keys[k]; changed {
				continue
			}
		}
		_, pending := run.pending[k]
		into = append(into, frozenEffect{key: k, effect: e, pending: pending})
	}
	if saved != nil {
		fr.status, fr.epoch, fr.deadline = saved.status, saved.epoch, saved.deadline
		for k, se := range saved.keys {
			if se.present {
				into = append(into, frozenEffect{key: k, effect: se.effect, pending: se.pending})
			}
		}
	}
	fr.effects = into[start:len(into):len(into)]
	fr.count = len(fr.effects)
	return fr, into
}

// appendRunHead appends a run of a snapshot up to its count of effects, which
// appendEffect then appends one by one, in any order.
func appendRunHead(buf []byte, run frozenRun) []byte {
	buf = appendString(buf, string(run.id))
	buf = append(buf, byte(run.status))
	buf = binary.AppendUvarint(buf, run.epoch)
	buf = binary.AppendUvarint(buf, uint64(run.deadline))
	return binary.AppendUvarint(buf, uint64(run.count))
}

func appendEffect(buf []byte, f frozenEffect) []byte {
	e := f.effect
	buf = appendString(buf, string(f.key))
	buf = append(buf, byte(e.Status), boolByte(e.Gated), boolByte(e.Approved), byte(e.Outcome), boolByte(f.pending))
	buf = binary.AppendUvarint(buf, e.Epoch)
	buf = appendString(buf, e.Result)
	if e.Note == nil {
		return append(buf, 0)
	}
	buf = append(buf, 1)
	buf = binary.AppendUvarint(buf, uint64(e.Note.Since))
	buf = appendString(buf, e.Note.Description)
	buf = appendString(buf, e.Note.ArgsDigest)
	return appendString(buf, e.Note.Reason)
}

// UnmarshalBinary replaces g's state with a snapshot made by MarshalBinary or a Cut
// (runs in any order). g keeps its limits. On error g is left unchanged. It must not
// be called while a cut is taken.
func (g *Gate) UnmarshalBinary(b []byte) error {
	if g.cut != nil {
		panic("soundgate/core: UnmarshalBinary during a cut")
	}
	d := decoder{b: b}
	version := d.uvarint()
	if version < 1 || version > snapshotVersion {
		return ErrCodec
	}
	n := d.uvarint()
	if d.err || n > uint64(len(b)) {
		return ErrCodec
	}
	var upto RunID
	switch version {
	case 3:
		if upto = RunID(d.string()); upto == "" {
			return ErrCodec // a gate with no watermark wrote version 2
		}
	case snapshotVersion:
		upto = RunID(d.string())
	}
	var retired retiredSet
	if version >= 2 && !d.readRetired(&retired, len(b)) {
		return ErrCodec
	}
	runs := make(map[RunID]*Run, n)
	order := make([]*Run, 0, n)
	var deadlines deadlineHeap
	for i := uint64(0); i < n && !d.err; i++ {
		run := newRun(RunID(d.string()))
		run.Status = RunStatus(d.byte())
		run.Epoch = d.uvarint()
		run.Deadline = Time(d.uvarint())
		if !d.readEffects(run, len(b), version >= snapshotVersion) {
			return ErrCodec
		}
		if run.Status == RunNone || run.Status > RunTimedOut {
			return ErrCodec
		}
		if _, dup := runs[run.ID]; dup || retired.has(run.ID) {
			return ErrCodec
		}
		run.index = len(order)
		order = append(order, run)
		runs[run.ID] = run
		if run.Status == RunActive && run.Deadline > 0 {
			deadlines = append(deadlines, deadlineEntry{at: run.Deadline, run: run.ID})
		}
	}
	if d.err || len(d.b) != 0 {
		return ErrCodec
	}
	// A slice sorted by deadline is a valid heap.
	slices.SortFunc(deadlines, func(a, b deadlineEntry) int {
		switch {
		case a == b:
			return 0
		case a.at < b.at || (a.at == b.at && a.run < b.run):
			return -1
		}
		return 1
	})
	g.runs, g.order, g.deadlines, g.retired, g.upto, g.bytes = runs, order, deadlines, retired, upto, countBytes(runs)
	g.asking = map[RunID]*Run{}
	for id, run := range runs {
		if len(run.pending) > 0 {
			g.asking[id] = run
		}
	}
	return nil
}

// readRetired reads the sorted retired ids of a snapshot into s; false if they are
// unsorted, repeated or empty, or more than the snapshot's bytes (a malformed one is
// the decoder's sticky error).
func (d *decoder) readRetired(s *retiredSet, limit int) bool {
	m := d.uvarint()
	if m > uint64(limit) {
		return false
	}
	ids := make([]RunID, 0, m)
	for j := uint64(0); j < m && !d.err; j++ {
		id := RunID(d.string())
		if id == "" || (len(ids) > 0 && id <= ids[len(ids)-1]) {
			return false
		}
		ids = append(ids, id)
	}
	s.blocks, s.n = []*retiredBlock{packBlock(ids)}, len(ids)
	return true
}

// readEffects reads the effects of run, at most limit, each with its note if notes;
// false if one is malformed.
func (d *decoder) readEffects(run *Run, limit int, notes bool) bool {
	m := d.uvarint()
	if m > uint64(limit) {
		return false
	}
	for j := uint64(0); j < m && !d.err; j++ {
		k := Key(d.string())
		var e Effect
		e.Status = EffectStatus(d.byte())
		e.Gated, e.Approved = d.byte() == 1, d.byte() == 1
		e.Outcome = Outcome(d.byte())
		pending := d.byte() == 1
		e.Epoch = d.uvarint()
		e.Result = d.string()
		if notes && !d.readNote(&e) {
			return false
		}
		if e.Status == EffectAbsent || e.Status > EffectRejected {
			return false
		}
		run.effects[k] = e
		if pending {
			run.pending[k] = struct{}{}
		}
		if e.Status == EffectHeld || e.Status == EffectReleased {
			run.open[k] = struct{}{}
		}
		if e.Status == EffectAdmitted {
			run.admitted++
		}
	}
	return true
}

// readNote reads an effect's note (appendEffect) into e; false if it is malformed.
func (d *decoder) readNote(e *Effect) bool {
	switch d.byte() {
	case 0:
		return true
	case 1:
	default:
		return false
	}
	n := &Note{Since: Time(d.uvarint()), Description: d.string(), ArgsDigest: d.string(), Reason: d.string()}
	e.Note = n
	return !d.err && n.check() == nil
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func appendString(buf []byte, s string) []byte {
	buf = binary.AppendUvarint(buf, uint64(len(s)))
	return append(buf, s...)
}

// decoder reads the encodings above; its first error is sticky.
type decoder struct {
	b   []byte
	err bool
}

func (d *decoder) uvarint() uint64 {
	if d.err {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = true
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) byte() byte {
	if d.err || len(d.b) == 0 {
		d.err = true
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *decoder) string() string {
	n := d.uvarint()
	if d.err || n > uint64(len(d.b)) {
		d.err = true
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}
