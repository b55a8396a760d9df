package tlacheck

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"
)

// traceRecordBytes is one state's record in the trace file: its parent's index and
// its fingerprint.
const traceRecordBytes = 12

// traceFile keeps, in the fingerprint mode, each state's parent index and fingerprint
// in a file instead of memory, as TLC's trace file does: they are read only to rebuild
// a counterexample, so memory is the fingerprint set and the queue. The file is
// unlinked once open (nothing is left behind), unless it is a checkpoint's.
type traceFile struct {
	f *os.File
	w *bufio.Writer
	n int // records written
}

// newTraceFile makes an unlinked trace file in dir (os.TempDir() if empty).
func newTraceFile(dir string) (*traceFile, error) {
	f, err := os.CreateTemp(dir, "tlacheck-trace-*")
	if err != nil {
		return nil, fmt.Errorf("the fingerprint mode's trace file: %w", err)
	}
	os.Remove(f.Name())
	return &traceFile{f: f, w: bufio.NewWriterSize(f, 1<<20)}, nil
}

// add appends state n's record.
func (t *traceFile) add(parent uint32, fp uint64) error {
	var b [traceRecordBytes]byte
	binary.LittleEndian.PutUint32(b[:4], parent)
	binary.LittleEndian.PutUint64(b[4:], fp)
	if _, err := t.w.Write(b[:]); err != nil {
		return fmt.Errorf("the fingerprint mode's trace file: %w", err)
	}
	t.n++
	return nil
}

// get reads state i's record.
func (t *traceFile) get(i int) (parent uint32, fp uint64, err error) {
	if i < 0 || i >= t.n {
		return 0, 0, fmt.Errorf("the trace file has no state %d (%d states)", i, t.n)
	}
	if err := t.w.Flush(); err != nil {
		return 0, 0, fmt.Errorf("the fingerprint mode's trace file: %w", err)
	}
	var b [traceRecordBytes]byte
	if _, err := t.f.ReadAt(b[:], int64(i)*traceRecordBytes); err != nil {
		return 0, 0, fmt.Errorf("the fingerprint mode's trace file, state %d: %w", i, err)
	}
	return binary.LittleEndian.Uint32(b[:4]), binary.LittleEndian.Uint64(b[4:]), nil
}

func (t *traceFile) close() {
	if t != nil {
		t.f.Close()
	}
}
