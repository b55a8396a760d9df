package tlacheck

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// stateQueue is the fingerprint mode's queue of states to expand, first in first out,
// kept encoded (a record: its length, the state's depth, then each variable's value
// by encode, the canonical encoding) in chunks that are compressed once full; the
// compressed chunks stay in memory up to a budget and go to a file beyond it, to be
// read back in order. Memory is then the chunk being written, the one being read, and
// the budget.
type stateQueue struct {
	nvars   int
	budget  int64 // bytes of compressed chunks kept in memory; beyond: the file
	dir     string
	w       []byte // the chunk being written: states encoded
	wn      int    // states in w
	chunks  []queueChunk
	inMem   int64 // bytes of the compressed chunks in memory
	file    *os.File
	fileEnd int64
	inFile  int    // chunks in the file not read yet
	r       []byte // what is left of the chunk being read, decoded
	rn      int    // states left in r
	len     int
	zw      *flate.Writer
	spilled int64 // bytes written to the file, all told
}

// queueChunk is a full chunk: compressed, in memory (data) or in the file at off.
type queueChunk struct {
	data   []byte
	off    int64
	size   int
	states int
}

// queueChunkBytes is how large a chunk grows before it is compressed (a variable for
// tests).
var queueChunkBytes = 1 << 20

func newStateQueue(nvars int, budget int64, dir string) *stateQueue {
	return &stateQueue{nvars: nvars, budget: budget, dir: dir}
}

// push appends st at depth d.
func (q *stateQueue) push(st []Value, d uint16) error {
	return q.pushRecord(appendRecord(nil, st, d))
}

// appendRecord appends st at depth d as the queue keeps it, less its length.
func appendRecord(buf []byte, st []Value, d uint16) []byte {
	buf = binary.AppendUvarint(buf, uint64(d))
	for _, v := range st {
		buf = encode(buf, v)
	}
	return buf
}

// pushRecord appends a record made by appendRecord.
func (q *stateQueue) pushRecord(rec []byte) error {
	q.w = binary.AppendUvarint(q.w, uint64(len(rec)))
	q.w = append(q.w, rec...)
	q.wn++
	q.len++
	if len(q.w) >= queueChunkBytes {
		return q.seal()
	}
	return nil
}

// seal compresses the chunk being written and keeps it, in memory or in the file.
func (q *stateQueue) seal() error {
	var buf bytes.Buffer
	if q.zw == nil {
		q.zw, _ = flate.NewWriter(&buf, flate.BestSpeed)
	} else {
		q.zw.Reset(&buf)
	}
	if _, err := q.zw.Write(q.w); err != nil {
		return err
	}
	if err := q.zw.Close(); err != nil {
		return err
	}
	c := queueChunk{size: buf.Len(), states: q.wn}
	if q.inMem+int64(c.size) <= q.budget {
		c.data = bytes.Clone(buf.Bytes())
		q.inMem += int64(c.size)
	} else {
		if q.file == nil {
			f, err := os.CreateTemp(q.dir, "tlacheck-queue-*")
			if err != nil {
				return fmt.Errorf("the queue's file: %w", err)
			}
			os.Remove(f.Name()) // gone with the process, whatever happens
			q.file = f
		}
		if _, err := q.file.WriteAt(buf.Bytes(), q.fileEnd); err != nil {
			return fmt.Errorf("the queue's file: %w", err)
		}
		c.off = q.fileEnd
		q.fileEnd += int64(c.size)
		q.inFile++
		q.spilled += int64(c.size)
	}
	q.chunks = append(q.chunks, c)
	q.w, q.wn = q.w[:0], 0
	return nil
}

// pop takes the first state and its depth; ok is false on an empty queue.
func (q *stateQueue) pop() (st []Value, d uint16, ok bool, err error) {
	rec, ok, err := q.popRecord()
	if !ok || err != nil {
		return nil, 0, false, err
	}
	st, d, err = decodeRecord(rec, q.nvars)
	return st, d, err == nil, err
}

// popRecord takes the first record, valid until the next pop.
func (q *stateQueue) popRecord() (rec []byte, ok bool, err error) {
	if q.rn == 0 {
		if err := q.load(); err != nil || q.rn == 0 {
			return nil, false, err
		}
	}
	n, k := binary.Uvarint(q.r)
	if k <= 0 || n > uint64(len(q.r)-k) {
		return nil, false, fmt.Errorf("the queue: a malformed record length")
	}
	rec, q.r = q.r[k:k+int(n)], q.r[k+int(n):]
	q.rn--
	q.len--
	return rec, true, nil
}

// decodeRecord decodes a record of nvars values.
func decodeRecord(rec []byte, nvars int) ([]Value, uint16, error) {
	dec := decoder{b: rec}
	d := uint16(dec.uvarint())
	st := make([]Value, nvars)
	for i := range st {
		st[i] = dec.value()
	}
	if dec.err == nil && len(dec.b) != 0 {
		dec.fail("bytes after the state")
	}
	if dec.err != nil {
		return nil, 0, fmt.Errorf("the queue: %w", dec.err)
	}
	return st, d, nil
}

// load makes the next chunk the one being read: the first full chunk, else the one
// being written.
func (q *stateQueue) load() error {
	if len(q.chunks) == 0 {
		q.r, q.rn = append(q.r[:0], q.w...), q.wn
		q.w, q.wn = q.w[:0], 0
		return nil
	}
	c := q.chunks[0]
	q.chunks[0] = queueChunk{}
	q.chunks = q.chunks[1:]
	data := c.data
	if data == nil {
		data = make([]byte, c.size)
		if _, err := q.file.ReadAt(data, c.off); err != nil {
			return fmt.Errorf("the queue's file: %w", err)
		}
		if q.inFile--; q.inFile == 0 {
			q.fileEnd = 0 // every chunk in the file was read: write it from its start again
		}
	} else {
		q.inMem -= int64(c.size)
	}
	raw, err := io.ReadAll(flate.NewReader(bytes.NewReader(data)))
	if err != nil {
		return fmt.Errorf("the queue: %w", err)
	}
	q.r, q.rn = raw, c.states
	return nil
}

// close removes the queue's file.
func (q *stateQueue) close() {
	if q.file != nil {
		q.file.Close()
	}
}

// decoder reads values written by encode.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) fail(what string) Value {
	if d.err == nil {
		d.err = fmt.Errorf("malformed state encoding: %s", what)
	}
	return falseV
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("a length")
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() string {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail("a string past the end")
		return ""
	}
	s := string(d.b[:n])
	d.b = d.b[n:]
	return s
}

func (d *decoder) values(n uint64) []Value {
	if n > uint64(len(d.b)) { // each value takes a byte at least
		d.fail("a count past the end")
		return nil
	}
	out := make([]Value, n)
	for i := range out {
		out[i] = d.value()
	}
	return out
}

func (d *decoder) value() Value {
	if d.err != nil || len(d.b) == 0 {
		return d.fail("a value past the end")
	}
	tag := d.b[0]
	d.b = d.b[1:]
	switch tag {
	case tagFalse:
		return falseV
	case tagTrue:
		return trueV
	case tagInt:
		v, n := binary.Varint(d.b)
		if n <= 0 {
			return d.fail("an integer")
		}
		d.b = d.b[n:]
		return mkInt(v)
	case tagStr:
		return &strV{s: d.bytes()}
	case tagModel:
		return mkModel(d.bytes())
	case tagSet:
		return mkSet(d.values(d.uvarint()))
	case tagTuple:
		return mkTuple(d.values(d.uvarint()))
	case tagFunc:
		n := d.uvarint()
		if n > uint64(len(d.b)) {
			return d.fail("a count past the end")
		}
		keys, vals := make([]Value, n), make([]Value, n)
		for i := range keys {
			keys[i], vals[i] = d.value(), d.value()
		}
		return mkFunc(keys, vals)
	}
	return d.fail(fmt.Sprintf("tag %d", tag))
}
