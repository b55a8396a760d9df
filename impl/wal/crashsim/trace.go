package crashsim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"strings"
	"sync"

	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Action names a step of spec/tla/WAL.tla; an Event is one such step of the log.
type Action string

// The steps a life of the simulation takes, named as WAL.tla's actions.
const (
	Append   Action = "Append"   // Log.Append returned Event.LSN
	Write    Action = "Write"    // one WriteAt of records to a segment; Event.LSN is the last of them
	Sync     Action = "Sync"     // an fdatasync of a segment returned nil
	Ack      Action = "Ack"      // WaitDurable(Event.LSN) returned nil
	Snapshot Action = "Snapshot" // the snapshot at Event.LSN was renamed into place
	SyncDir  Action = "SyncDir"  // an fsync of the log's directory returned nil
	Crash    Action = "Crash"    // the machine stopped
	Recover  Action = "Recover"  // wal.Open and Replay; Event.Replay is what they gave
)

// Event is one step of the abstract trace of a life: what WAL.tla calls the step, with
// its LSN. Payloads are their FNV-64a digests.
type Event struct {
	Action  Action
	LSN     wal.LSN // Append, Write, Ack, Snapshot
	Payload uint64  // Append: the digest of the record's payload
	Replay  *Replay // Recover
}

// Replay is what a recovery gave: the snapshot's LSN (0: none) and every record
// replayed after it, in order.
type Replay struct {
	Snapshot wal.LSN
	Records  []Record
}

// Record is one replayed record: its LSN and the digest of its payload.
type Record struct {
	LSN     wal.LSN
	Payload uint64
}

func (e Event) String() string {
	switch {
	case e.Replay != nil:
		n := len(e.Replay.Records)
		if n == 0 {
			return fmt.Sprintf("%s(snapshot %d, no record)", e.Action, e.Replay.Snapshot)
		}
		return fmt.Sprintf("%s(snapshot %d, records %d..%d)", e.Action, e.Replay.Snapshot, e.Replay.Records[0].LSN, e.Replay.Records[n-1].LSN)
	case e.LSN > 0:
		return fmt.Sprintf("%s(%d)", e.Action, e.LSN)
	}
	return string(e.Action)
}

// Digest is the digest of a payload in the trace.
func Digest(p []byte) uint64 {
	h := fnv.New64a()
	h.Write(p)
	return h.Sum64()
}

// recorder collects the events of one life in an order the spec can replay. Append
// events come from the writers (in LSN order, under the model's lock) and the I/O
// events from the file system seam; a writer may see its LSN after the batch
// holding its record was written. Such a Write, and every event after it, waits for
// the Append it names: the Append took effect inside Log.Append, before the batch
// was taken, so this is the order in which the steps happened.
type recorder struct {
	mu       sync.Mutex
	on       bool // off while Open runs: its I/O is the Recover step's
	events   []Event
	waiting  []Event // events held for an Append not yet recorded
	appended wal.LSN // the last Append recorded
	snapUpto wal.LSN // the snapshot being taken (set by the snapshotter before Snapshot)
	err      error   // the first step the recorder could not read
}

// needs is the LSN that must have been appended before e.
func needs(e Event) wal.LSN {
	switch e.Action {
	case Write, Ack, Snapshot:
		return e.LSN
	}
	return 0
}

func (r *recorder) add(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on {
		return
	}
	if e.Action == Append {
		r.events = append(r.events, e)
		r.appended = e.LSN
		for len(r.waiting) > 0 && needs(r.waiting[0]) <= r.appended {
			r.events = append(r.events, r.waiting[0])
			r.waiting = r.waiting[1:]
		}
		return
	}
	if len(r.waiting) > 0 || needs(e) > r.appended {
		r.waiting = append(r.waiting, e)
		return
	}
	r.events = append(r.events, e)
}

func (r *recorder) fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = err
	}
}

// start begins the trace of a life with its recovery; last is the last LSN recovered.
func (r *recorder) start(rec Event, last wal.LSN) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on, r.events, r.waiting, r.appended = true, []Event{rec}, nil, last
}

// finish ends the life's trace, with its crash if crashed, and returns it.
func (r *recorder) finish(crashed bool) ([]Event, error) {
	if crashed {
		r.add(Event{Action: Crash})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.on = false
	if r.err == nil && len(r.waiting) > 0 {
		r.err = fmt.Errorf("trace: %d steps wait for an Append never recorded, the first %s", len(r.waiting), r.waiting[0])
	}
	return r.events, r.err
}

func (r *recorder) setSnapshot(upto wal.LSN) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.snapUpto = upto
}

// tracedFS is the file system seam as the log sees it, recording the I/O that is a
// step of the spec: record writes and fdatasyncs of segments, a snapshot's rename,
// directory syncs. Its lock makes the order of the events that of the operations on
// the FaultFS, which are themselves serialised.
type tracedFS struct {
	mu  sync.Mutex
	fs  *walfs.FaultFS
	rec *recorder
}

var _ walfs.FS = (*tracedFS)(nil)

// segmentHeaderBytes is the size of a segment's header (docs/wal.md): records are
// written after it.
const segmentHeaderBytes = 32

// recordHeaderBytes is the size of a record's header (docs/wal.md): crc, length,
// LSN, crc.
const recordHeaderBytes = 20

func isSegment(path string) bool { return strings.HasSuffix(path, ".wal") }

func (t *tracedFS) MkdirAll(dir string) error            { return t.fs.MkdirAll(dir) }
func (t *tracedFS) ReadDir(dir string) ([]string, error) { return t.fs.ReadDir(dir) }
func (t *tracedFS) ReadFile(path string) ([]byte, error) { return t.fs.ReadFile(path) }
func (t *tracedFS) Lock(path string) (io.Closer, error)  { return t.fs.Lock(path) }

func (t *tracedFS) Create(path string) (walfs.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.fs.Create(path)
	if err != nil {
		return nil, err
	}
	return &tracedFile{t: t, f: f, path: path}, nil
}

func (t *tracedFS) OpenAppend(path string) (walfs.File, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f, err := t.fs.OpenAppend(path)
	if err != nil {
		return nil, err
	}
	return &tracedFile{t: t, f: f, path: path}, nil
}

func (t *tracedFS) Rename(oldPath, newPath string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.fs.Rename(oldPath, newPath)
	if err == nil && strings.HasSuffix(newPath, ".snap") {
		t.rec.mu.Lock()
		upto := t.rec.snapUpto
		t.rec.mu.Unlock()
		t.rec.add(Event{Action: Snapshot, LSN: upto})
	}
	return err
}

func (t *tracedFS) Remove(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.fs.Remove(path)
}

func (t *tracedFS) SyncDir(dir string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.fs.SyncDir(dir)
	if err == nil {
		t.rec.add(Event{Action: SyncDir})
	}
	return err
}

type tracedFile struct {
	t    *tracedFS
	f    walfs.File
	path string
}

func (f *tracedFile) Write(p []byte) (int, error) {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	return f.f.Write(p)
}

func (f *tracedFile) WriteAt(p []byte, off int64) (int, error) {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	crashedBefore := f.t.fs.Crashed()
	n, err := f.f.WriteAt(p, off)
	// A write during which the machine stops has reached the page cache (FaultFS):
	// a crash may keep it. One refused because the machine had stopped has not.
	reached := err == nil || (!crashedBefore && errors.Is(err, walfs.ErrCrashed))
	if reached && isSegment(f.path) && off >= segmentHeaderBytes && n > 0 {
		lsn, perr := lastLSN(p[:n])
		if perr != nil {
			f.t.rec.fail(fmt.Errorf("trace: write of %d bytes to %s at %d: %v", n, f.path, off, perr))
		} else {
			f.t.rec.add(Event{Action: Write, LSN: lsn})
		}
	}
	return n, err
}

func (f *tracedFile) Sync() error {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	err := f.f.Sync()
	if err == nil && isSegment(f.path) {
		f.t.rec.add(Event{Action: Sync})
	}
	return err
}

func (f *tracedFile) Allocate(size int64) error {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	return f.f.Allocate(size)
}

func (f *tracedFile) Truncate(size int64) error {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	return f.f.Truncate(size)
}

func (f *tracedFile) Close() error {
	f.t.mu.Lock()
	defer f.t.mu.Unlock()
	return f.f.Close()
}

// lastLSN returns the LSN of the last record in b, a run of whole records as the log
// writes them (the layout of docs/wal.md: length at byte 4, LSN at byte 8).
func lastLSN(b []byte) (wal.LSN, error) {
	var lsn wal.LSN
	for off := 0; off < len(b); {
		if len(b)-off < recordHeaderBytes {
			return 0, fmt.Errorf("a record header cut at byte %d", off)
		}
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		lsn = wal.LSN(binary.LittleEndian.Uint64(b[off+8:]))
		off += recordHeaderBytes + n
		if off > len(b) {
			return 0, fmt.Errorf("record %d runs past the write", lsn)
		}
	}
	return lsn, nil
}
