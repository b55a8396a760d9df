package tlacheck

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// Checkpoints (Options.Checkpoint, Options.Recover; the fingerprint mode, TLC's
// -checkpoint and -recover): at the end of a level, at most every CheckpointEvery, the
// search is saved to a folder: the fingerprint set, the queue (then exactly the next
// level's states) and the figures so far; the trace file lives in the folder and is
// only ever appended to, so a checkpoint records its length. A checkpoint is made of
// files of one generation and a manifest that names it, written last and renamed into
// place: a process killed while saving leaves the previous checkpoint whole. A run
// recovered from a checkpoint goes on level by level from it and ends with the figures
// of a run that was never stopped.

// DefaultCheckpointEvery is the least time between two checkpoints.
const DefaultCheckpointEvery = 30 * time.Minute

// checkpointVersion is the manifest's format. 2: the manifest says how states were
// keyed under SYMMETRY (Canon); the fingerprints of version 1 are of the keys by
// enumeration of the set as given, not of its group.
const checkpointVersion = 2

const (
	manifestName = "checkpoint.json"
	traceName    = "trace.bin"
)

// manifest is checkpoint.json: what a checkpoint is of, and where the search was.
type manifest struct {
	Version     int    `json:"version"`
	Key         string `json:"key"`
	Canon       string `json:"canon,omitempty"` // explorer.canon: the fingerprints are of its keys
	Gen         int    `json:"gen"`
	Slots       int    `json:"slots"`
	Distinct    int    `json:"distinct"`
	Generated   int64  `json:"generated"`
	MaxDepth    uint16 `json:"max_depth"`
	Head        int    `json:"head"` // states expanded: the queue holds states Head..Distinct-1
	ElapsedNs   int64  `json:"elapsed_ns"`
	WrittenUnix int64  `json:"written_unix"`
}

// ErrCheckpoint is wrapped by the errors of saving and recovering checkpoints.
var ErrCheckpoint = errors.New("tlacheck: checkpoint")

func (m *manifest) files() (fpset, queue string) {
	return fmt.Sprintf("fpset-%d.bin", m.Gen), fmt.Sprintf("queue-%d.bin", m.Gen)
}

// openCheckpointTrace makes the trace file of a checkpointed run: dir/trace.bin, kept.
func openCheckpointTrace(dir string) (*traceFile, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if _, err := os.Stat(filepath.Join(dir, manifestName)); err == nil {
		return nil, fmt.Errorf("%w: %s already holds a checkpoint: recover from it, or give an empty folder", ErrCheckpoint, dir)
	}
	f, err := os.OpenFile(filepath.Join(dir, traceName), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	return &traceFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// saveCheckpoint saves the search at a level's end: head states expanded, the queue
// holding the rest.
func (r *search) saveCheckpoint(head int) error {
	e := r.e
	start := time.Now()
	dir := e.opts.Checkpoint
	old, _ := readManifest(dir)
	m := &manifest{Version: checkpointVersion, Key: e.opts.CheckpointKey, Canon: e.canon(), Slots: len(e.fp.slots), Distinct: e.count(),
		Generated: e.generat, MaxDepth: e.maxDepth, Head: head, ElapsedNs: r.elapsed().Nanoseconds(), WrittenUnix: time.Now().Unix()}
	if old != nil {
		m.Gen = old.Gen + 1
	}
	fpName, qName := m.files()
	if err := e.tr.w.Flush(); err != nil {
		return fmt.Errorf("%w: the trace file: %v", ErrCheckpoint, err)
	}
	if err := e.tr.f.Sync(); err != nil {
		return fmt.Errorf("%w: the trace file: %v", ErrCheckpoint, err)
	}
	if err := writeSynced(filepath.Join(dir, fpName), func(w io.Writer) error {
		var b [8]byte
		for _, s := range e.fp.slots {
			binary.LittleEndian.PutUint64(b[:], s)
			if _, err := w.Write(b[:]); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	// The queue is read out into the file and pushed back, in order.
	n := e.count() - head
	if err := writeSynced(filepath.Join(dir, qName), func(w io.Writer) error {
		recs := make([][]byte, 0, min(n, 1<<16))
		for i := 0; i < n; i++ {
			rec, ok, err := e.queue.popRecord()
			if err == nil && !ok {
				err = fmt.Errorf("the queue holds %d states, not %d", i, n)
			}
			if err != nil {
				return err
			}
			if _, err := w.Write(binary.AppendUvarint(nil, uint64(len(rec)))); err != nil {
				return err
			}
			if _, err := w.Write(rec); err != nil {
				return err
			}
			recs = append(recs, append([]byte(nil), rec...))
			if len(recs) == cap(recs) || i == n-1 {
				for _, rec := range recs {
					if err := e.queue.pushRecord(rec); err != nil {
						return err
					}
				}
				recs = recs[:0]
			}
		}
		return nil
	}); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := writeSynced(filepath.Join(dir, manifestName+".tmp"), func(w io.Writer) error {
		_, err := w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(dir, manifestName+".tmp"), filepath.Join(dir, manifestName)); err != nil {
		return fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	if old != nil {
		ofp, oq := old.files()
		os.Remove(filepath.Join(dir, ofp))
		os.Remove(filepath.Join(dir, oq))
	}
	r.checkpoints++
	if e.opts.Progress != nil {
		fmt.Fprintf(e.opts.Progress, "tlacheck: checkpoint %d written to %s: %d distinct states, %d left on the queue, depth %d, in %.1fs\n",
			m.Gen, dir, m.Distinct, n, int(m.MaxDepth)+1, time.Since(start).Seconds())
	}
	return nil
}

// writeSynced writes path through fill and fsyncs it.
func writeSynced(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrCheckpoint, path, err)
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	return nil
}

func readManifest(dir string) (*manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, manifestName))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	m := &manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCheckpoint, filepath.Join(dir, manifestName), err)
	}
	if m.Version != checkpointVersion {
		return nil, fmt.Errorf("%w: %s is of format %d, not %d", ErrCheckpoint, dir, m.Version, checkpointVersion)
	}
	return m, nil
}

// recover loads the checkpoint in e.opts.Recover into e and returns the number of
// states it had expanded; later checkpoints go to the same folder.
func (r *search) recover() (int, error) {
	e := r.e
	dir := e.opts.Recover
	m, err := readManifest(dir)
	if err != nil {
		return 0, err
	}
	if m.Key != e.opts.CheckpointKey {
		return 0, fmt.Errorf("%w: %s is a checkpoint of another spec, config or options (its key %q, this run's %q)", ErrCheckpoint, dir, m.Key, e.opts.CheckpointKey)
	}
	if m.Canon != e.canon() {
		return 0, fmt.Errorf("%w: %s is a checkpoint of states keyed by %s, this run keys them by %s", ErrCheckpoint, dir, orNone(m.Canon), orNone(e.canon()))
	}
	if m.Slots != len(e.fp.slots) {
		return 0, fmt.Errorf("%w: %s has a fingerprint set of %d slots, this run %d: give the -fingerprints it was made with", ErrCheckpoint, dir, m.Slots, len(e.fp.slots))
	}
	if m.Head > m.Distinct || m.Distinct > e.fp.max {
		return 0, fmt.Errorf("%w: %s: its figures do not hold together (head %d, distinct %d)", ErrCheckpoint, dir, m.Head, m.Distinct)
	}
	fpName, qName := m.files()
	b, err := os.ReadFile(filepath.Join(dir, fpName))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if len(b) != 8*m.Slots {
		return 0, fmt.Errorf("%w: %s is %d bytes, not %d", ErrCheckpoint, fpName, len(b), 8*m.Slots)
	}
	held := 0
	for i := range e.fp.slots {
		e.fp.slots[i] = binary.LittleEndian.Uint64(b[8*i:])
		if e.fp.slots[i] != 0 {
			held++
		}
	}
	if held != m.Distinct {
		return 0, fmt.Errorf("%w: %s holds %d fingerprints, the manifest says %d", ErrCheckpoint, fpName, held, m.Distinct)
	}
	e.fp.n.Store(int64(held))
	f, err := os.OpenFile(filepath.Join(dir, traceName), os.O_RDWR, 0)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if st, err := f.Stat(); err != nil || st.Size() < int64(m.Distinct)*traceRecordBytes {
		f.Close()
		return 0, fmt.Errorf("%w: %s is shorter than the checkpoint's %d states", ErrCheckpoint, traceName, m.Distinct)
	}
	if err := f.Truncate(int64(m.Distinct) * traceRecordBytes); err != nil {
		f.Close()
		return 0, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return 0, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	e.tr = &traceFile{f: f, w: bufio.NewWriterSize(f, 1<<20), n: m.Distinct}
	q, err := os.ReadFile(filepath.Join(dir, qName))
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrCheckpoint, err)
	}
	for n := 0; len(q) > 0; n++ {
		l, k := binary.Uvarint(q)
		if k <= 0 || l > uint64(len(q)-k) {
			return 0, fmt.Errorf("%w: %s: a malformed record at state %d", ErrCheckpoint, qName, n)
		}
		if err := e.queue.pushRecord(q[k : k+int(l)]); err != nil {
			return 0, err
		}
		q = q[k+int(l):]
	}
	if e.queue.len != m.Distinct-m.Head {
		return 0, fmt.Errorf("%w: %s holds %d states, the manifest says %d", ErrCheckpoint, qName, e.queue.len, m.Distinct-m.Head)
	}
	e.generat, e.maxDepth = m.Generated, m.MaxDepth
	r.before = time.Duration(m.ElapsedNs)
	r.res.Recovered = m.Distinct
	e.opts.Checkpoint = dir
	if e.opts.Progress != nil {
		fmt.Fprintf(e.opts.Progress, "tlacheck: recovered checkpoint %d of %s: %d distinct states, %d generated, %d left on the queue, depth %d\n",
			m.Gen, dir, m.Distinct, m.Generated, m.Distinct-m.Head, int(m.MaxDepth)+1)
	}
	return m.Head, nil
}

func orNone(canon string) string {
	if canon == "" {
		return "no symmetry"
	}
	return canon
}
