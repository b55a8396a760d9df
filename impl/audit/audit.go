// Package audit is the gate's audit trail: every decision, cancel, fence and
// timeout, with who asked (the token's name), when (the gate's clock) and why, in a
// file of JSON lines beside the log (docs/audit.md).
//
// The log is the trail's source: each entry is derived from a logged command
// (node.Change) and carries the record's position (LSN). The trail writes an entry
// once its record is durable, and a snapshot waits for the trail before the log
// forgets records (node.Audit), so an entry is always in the log, in the trail, or
// both; Open and a node's recovery fill in what a crash left out, and an entry the
// file already holds is never written twice.
package audit

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
)

// FileName is the trail's file in the gate's data directory.
const FileName = "audit.jsonl"

// The actions an entry records.
const (
	ActionApprove = "approve"
	ActionReject  = "reject"
	ActionCancel  = "cancel"
	ActionFence   = "fence"
	ActionTimeout = "timeout"
)

// Entry is one line of the trail.
type Entry struct {
	LSN    uint64 `json:"lsn"`    // the log record it comes from
	AtMs   int64  `json:"at_ms"`  // the gate's clock, Unix milliseconds
	Action string `json:"action"` // approve, reject, cancel, fence, timeout
	Run    string `json:"run"`
	Key    string `json:"key,omitempty"` // approve, reject: the decided key
	// By is the name of the token that asked; "" for a timeout (the gate's clock).
	By     string `json:"by,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Description and ArgsDigest are what the decided approval said.
	Description string `json:"description,omitempty"`
	ArgsDigest  string `json:"args_digest,omitempty"`
	// Closed are the keys of the approvals it closed, in the inbox's order.
	Closed []string `json:"closed,omitempty"`
}

// EntryOf is the entry the trail keeps of ch, and false for a change it keeps none
// of (an open, an admit that timed nothing out, a complete, a retire).
func EntryOf(ch node.Change) (Entry, bool) {
	c := ch.Cmd
	e := Entry{LSN: uint64(ch.LSN), AtMs: int64(c.Now), Run: string(c.Run), By: c.By, Reason: c.Reason}
	switch {
	case c.Op == core.OpDecide:
		e.Action, e.Key = ActionReject, string(c.Key)
		if c.Decision == core.Approve {
			e.Action = ActionApprove
		}
		for _, a := range ch.Closed {
			if a.Key == c.Key {
				e.Description, e.ArgsDigest = a.Description, a.ArgsDigest
			}
		}
	case c.Op == core.OpCancel:
		e.Action = ActionCancel
	case c.Op == core.OpFence:
		e.Action = ActionFence
	case ch.TimedOut:
		e.Action, e.By, e.Reason = ActionTimeout, "", ""
	default:
		return Entry{}, false
	}
	for _, a := range ch.Closed {
		e.Closed = append(e.Closed, string(a.Key))
	}
	return e, true
}

// Errors of the trail.
var (
	// ErrDamaged: the trail's file holds a line that is not an entry, or entries out
	// of order, before its last line: the gate does not start over a trail it would
	// misreport.
	ErrDamaged = errors.New("soundgate/audit: damaged audit trail")
	// ErrClosed: the trail was closed.
	ErrClosed = errors.New("soundgate/audit: closed")
)

// Trail writes the entries of a node's changes to the trail's file. It implements
// node.Audit.
type Trail struct {
	f       *os.File
	durable func(context.Context, wal.LSN) error
	onFail  func(error)

	mu      sync.Mutex
	cond    *sync.Cond
	last    uint64  // the last entry in the file (or taken to write)
	queue   []Entry // recorded, not yet taken by the writer
	writing uint64  // the first entry the writer holds (0: none)
	err     error   // sticky: the trail failed or was closed
	done    chan struct{}
}

// Open opens (or creates) the trail's file at path, cuts a torn last line (a crash
// while it was written: its record is still in the log), and starts the writer.
// durable waits until a log position is durable (wal.Log.WaitDurable); onFail, if
// set, is told once if the trail cannot write (the gate then fails closed).
func Open(path string, durable func(context.Context, wal.LSN) error, onFail func(error)) (*Trail, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("soundgate/audit: %w", err)
	}
	last, end, err := scan(f, path)
	if err == nil {
		err = cut(f, end)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	t := &Trail{f: f, durable: durable, onFail: onFail, last: last, done: make(chan struct{})}
	t.cond = sync.NewCond(&t.mu)
	go t.write()
	return t, nil
}

// Last returns the position of the last entry the file holds or the writer took.
func (t *Trail) Last() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// scan reads the whole file: the LSN of its last entry and the end of its last
// whole line. A bad line that is the last one (no newline after it) is torn; any
// other is damage.
func scan(f *os.File, path string) (last uint64, end int64, err error) {
	r := bufio.NewReaderSize(f, 64<<10)
	var off int64
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return last, off, nil // a torn line, or none: cut it
		}
		if err != nil {
			return 0, 0, fmt.Errorf("soundgate/audit: read %s: %w", path, err)
		}
		e, perr := parse(line)
		switch {
		case perr != nil:
			return 0, 0, fmt.Errorf("%w: %s, line %d: %v", ErrDamaged, path, n, perr)
		case e.LSN <= last:
			return 0, 0, fmt.Errorf("%w: %s, line %d: entry %d after entry %d", ErrDamaged, path, n, e.LSN, last)
		}
		last, off = e.LSN, off+int64(len(line))
	}
}

// parse decodes one line of the trail.
func parse(line []byte) (Entry, error) {
	var e Entry
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		return Entry{}, err
	}
	if e.LSN == 0 || e.Action == "" || e.Run == "" {
		return Entry{}, errors.New("an entry needs lsn, action and run")
	}
	return e, nil
}

// cut truncates f to end (a torn last line) and leaves its offset there.
func cut(f *os.File, end int64) error {
	if fi, err := f.Stat(); err != nil {
		return fmt.Errorf("soundgate/audit: %w", err)
	} else if fi.Size() != end {
		if err := f.Truncate(end); err != nil {
			return fmt.Errorf("soundgate/audit: cut a torn line: %w", err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("soundgate/audit: %w", err)
		}
	}
	_, err := f.Seek(end, io.SeekStart)
	return err
}

// Record files the entry of ch, if it has one the file lacks (node.Audit). It
// never blocks.
func (t *Trail) Record(ch node.Change, _ bool) {
	e, ok := EntryOf(ch)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if e.LSN <= t.last || t.err != nil {
		return
	}
	t.last = e.LSN
	t.queue = append(t.queue, e)
	t.cond.Broadcast()
}

// Sync returns once every entry recorded up to lsn is in the file and synced, or
// the trail's error (node.Audit).
func (t *Trail) Sync(lsn wal.LSN) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.err == nil && t.unsyncedUpTo(lsn) {
		t.cond.Wait()
	}
	if t.unsyncedUpTo(lsn) {
		return t.err
	}
	return nil
}

// unsyncedUpTo reports whether an entry up to lsn is recorded and not yet synced.
func (t *Trail) unsyncedUpTo(lsn wal.LSN) bool {
	first := t.writing
	if first == 0 && len(t.queue) > 0 {
		first = t.queue[0].LSN
	}
	return first != 0 && first <= uint64(lsn)
}

// Close writes what was recorded and whose records are durable, then closes the
// file.
func (t *Trail) Close() error {
	t.mu.Lock()
	if t.err == nil {
		t.err = ErrClosed
	}
	t.cond.Broadcast()
	t.mu.Unlock()
	<-t.done
	return t.f.Close()
}

// write is the writer: it takes the queue, waits until the log holds its records,
// appends its lines and syncs, until the trail fails or closes.
func (t *Trail) write() {
	defer close(t.done)
	var buf []byte
	for {
		t.mu.Lock()
		for len(t.queue) == 0 && t.err == nil {
			t.cond.Wait()
		}
		batch, closing := t.queue, t.err != nil
		t.queue = nil
		if len(batch) > 0 {
			t.writing = batch[0].LSN
		}
		t.mu.Unlock()
		if len(batch) == 0 && closing {
			return
		}
		err := t.durable(context.Background(), wal.LSN(batch[len(batch)-1].LSN))
		if err == nil {
			buf = buf[:0]
			for _, e := range batch {
				line, _ := json.Marshal(e) // strings and integers only: never fails
				buf = append(append(buf, line...), '\n')
			}
			if _, err = t.f.Write(buf); err == nil {
				err = t.f.Sync()
			}
		}
		t.mu.Lock()
		if err != nil {
			if errors.Is(t.err, ErrClosed) && closing {
				t.mu.Unlock()
				return // the log closed under a closing trail: its records replay
			}
			t.err = fmt.Errorf("soundgate/audit: write: %w", err)
			t.cond.Broadcast()
			t.mu.Unlock()
			if t.onFail != nil {
				t.onFail(err)
			}
			return
		}
		t.writing = 0
		t.cond.Broadcast()
		t.mu.Unlock()
	}
}

// Read calls fn with each entry of the trail's file at path, in order, those of
// run only when run is not "". A torn last line (being written) is not read.
func Read(path, run string, fn func(Entry) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("soundgate/audit: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("soundgate/audit: read %s: %w", path, err)
		}
		e, err := parse(line)
		if err != nil {
			return fmt.Errorf("%w: %s, line %d: %v", ErrDamaged, path, n, err)
		}
		if run == "" || e.Run == run {
			if err := fn(e); err != nil {
				return err
			}
		}
	}
}
