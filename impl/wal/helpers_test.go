package wal

import (
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// Helpers shared by the package's tests: opening and filling a log, hand-built
// directories, and the file systems wrapped around FaultFS to hold, count or break
// the log's file calls.
//
// A test's "Kills:" note names the mutants (cmd/mutate ids, file:Func:operator:hash)
// it is the test to catch; `go run ./cmd/mutate -only ID -test ./impl/wal/ ./impl/wal/`
// re-runs one.

// testDir is the log's directory on FaultFS.
const testDir = "/wal"

// bothFS are the file systems a test that must hold on a real disk runs on: the
// operating system's, in a temporary directory, and FaultFS.
var bothFS = []struct {
	name string
	fs   func(t *testing.T) (walfs.FS, string)
}{
	{"os", func(t *testing.T) (walfs.FS, string) { return walfs.OS{}, t.TempDir() }},
	{"fault", func(t *testing.T) (walfs.FS, string) { return walfs.NewFaultFS(), testDir }},
}

// onBothFS runs f as one subtest on each of bothFS, with its file system and the
// directory of the log.
func onBothFS(t *testing.T, f func(t *testing.T, fsys walfs.FS, dir string)) {
	for _, b := range bothFS {
		t.Run(b.name, func(t *testing.T) {
			fsys, dir := b.fs(t)
			f(t, fsys, dir)
		})
	}
}

// payload is the content of record lsn in the tests: size bytes that differ from one
// LSN to the next.
func payload(lsn LSN, size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(uint64(lsn)*31 + uint64(i)*7)
	}
	return b
}

// replayed is what Replay delivered.
type replayed struct {
	snapLSN LSN
	state   []byte
	lsns    []LSN
	recs    [][]byte
}

// replayAll replays l and returns copies of the snapshot and of every record.
func replayAll(t *testing.T, l *Log) replayed {
	t.Helper()
	var r replayed
	err := l.Replay(func(upto LSN, state []byte) error {
		r.snapLSN, r.state = upto, append([]byte(nil), state...)
		return nil
	}, func(lsn LSN, rec []byte) error {
		r.lsns = append(r.lsns, lsn)
		r.recs = append(r.recs, append([]byte(nil), rec...))
		return nil
	})
	if err != nil {
		t.Fatalf("Replay: %v", err)
	}
	return r
}

// mustOpen opens the log in testDir of fsys with segments of segBytes (0: the default).
func mustOpen(t *testing.T, fsys walfs.FS, segBytes int64) *Log {
	t.Helper()
	return mustOpenIn(t, fsys, testDir, segBytes)
}

// mustOpenIn is mustOpen in dir (a bothFS test's directory).
func mustOpenIn(t *testing.T, fsys walfs.FS, dir string, segBytes int64) *Log {
	t.Helper()
	l, err := Open(dir, Options{FS: fsys, SegmentBytes: segBytes})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return l
}

// appendWait appends rec, waits until it is durable and returns its LSN.
func appendWait(t *testing.T, l *Log, rec []byte) LSN {
	t.Helper()
	lsn, err := l.Append(rec)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	if err := l.WaitDurable(context.Background(), lsn); err != nil {
		t.Fatalf("WaitDurable(%d): %v", lsn, err)
	}
	return lsn
}

// openEmpty opens the log as mustOpen does and replays it: ready for Append.
func openEmpty(t *testing.T, fsys walfs.FS, segBytes int64) *Log {
	t.Helper()
	l := mustOpen(t, fsys, segBytes)
	replayAll(t, l)
	return l
}

// history is what a test appended and what the log acknowledged.
type history struct {
	recs  map[LSN][]byte
	acked LSN // every LSN up to this one was acknowledged (WaitDurable returned nil)
}

// fill appends n records of size bytes to a new log, payload(i, size) for i = 1..n,
// waits for each, and returns them as the acknowledged history.
func fill(t *testing.T, l *Log, n, size int) history {
	t.Helper()
	h := history{recs: map[LSN][]byte{}}
	for i := 1; i <= n; i++ {
		rec := payload(LSN(i), size)
		h.recs[appendWait(t, l, rec)] = rec
		h.acked = LSN(i)
	}
	return h
}

// appendBacklog appends n records of size bytes to a new log, payload(i, size) for
// i = 1..n, without waiting, so that they pile up for one commit; then it waits for
// the last.
func appendBacklog(t *testing.T, l *Log, n, size int) {
	t.Helper()
	var last LSN
	for i := 1; i <= n; i++ {
		lsn, err := l.Append(payload(LSN(i), size))
		if err != nil {
			t.Fatal(err)
		}
		last = lsn
	}
	if err := l.WaitDurable(context.Background(), last); err != nil {
		t.Fatal(err)
	}
}

// appendDurable appends rec and waits until it is durable.
func appendDurable(l *Log, rec []byte) error {
	lsn, err := l.Append(rec)
	if err == nil {
		err = l.WaitDurable(context.Background(), lsn)
	}
	return err
}

// failNext injects fault into fsys, appends rec and returns what WaitDurable of it
// returns: the log's failure when the fault fails the commit.
func failNext(t *testing.T, fsys interface{ Inject(walfs.Fault) }, l *Log, fault walfs.Fault, rec []byte) error {
	t.Helper()
	fsys.Inject(fault)
	lsn, err := l.Append(rec)
	if err != nil {
		t.Fatal(err)
	}
	return l.WaitDurable(context.Background(), lsn)
}

// snapshotAt opens the log on fsys, snapshots state at upto and closes the log.
func snapshotAt(t *testing.T, fsys walfs.FS, segBytes int64, upto LSN, state []byte) {
	t.Helper()
	l := openEmpty(t, fsys, segBytes)
	if err := l.Snapshot(upto, state); err != nil {
		t.Fatal(err)
	}
	l.Close()
}

// segPath is the path of segment n in testDir.
func segPath(n uint64) string { return testDir + "/" + segmentName(n) }

// buildLog writes n acknowledged records of size bytes with 1 KiB segments, closes
// the log, and returns the file system and the offsets of every record per segment.
func buildLog(t *testing.T, n, size int) (*walfs.FaultFS, map[string][]int) {
	t.Helper()
	fsys := walfs.NewFaultFS()
	l := openEmpty(t, fsys, 1024)
	fill(t, l, n, size)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	offsets := map[string][]int{}
	names, _ := fsys.ReadDir(testDir)
	for _, name := range names {
		b, _ := fsys.ReadFile(testDir + "/" + name)
		for off := segmentHeaderBytes; off < len(b); {
			r, ok := decodeRecord(b, off)
			if !ok {
				t.Fatalf("%s: bad record at %d in a clean log", name, off)
			}
			offsets[name] = append(offsets[name], off)
			off = r.end
		}
	}
	return fsys, offsets
}

func rewrite(t *testing.T, fsys *walfs.FaultFS, path string, content []byte) {
	t.Helper()
	if err := fsys.Remove(path); err != nil {
		t.Fatal(err)
	}
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fsys.SyncDir(testDir)
}

// recPayloadBytes is the payload size of the records of the hand-built directories,
// so that record k (counting from 0) of a segment starts at recOff(k).
const recPayloadBytes = 40

func recOff(k int) int64 {
	return int64(segmentHeaderBytes + k*(recordHeaderBytes+recPayloadBytes))
}

// segFile lays out a segment file by hand: a header naming segment num and first,
// then one record of recPayloadBytes for each LSN in lsns, in that order.
func segFile(num uint64, first LSN, lsns ...LSN) []byte {
	b := encodeSegmentHeader(segmentHeader{segment: num, firstLSN: first})
	for _, lsn := range lsns {
		b = appendRecord(b, lsn, payload(lsn, recPayloadBytes))
	}
	return b
}

// flip returns a copy of b with the bits of mask flipped in the byte at off.
func flip(b []byte, off int64, mask byte) []byte {
	c := bytes.Clone(b)
	c[off] ^= mask
	return c
}

// putFiles writes the files (base name -> content) into testDir on fsys and makes
// them and their directory entries durable.
func putFiles(t *testing.T, fsys walfs.FS, files map[string][]byte) {
	t.Helper()
	if err := fsys.MkdirAll(testDir); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		f, err := fsys.Create(walfs.Join(testDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) > 0 {
			if _, err := f.WriteAt(data, 0); err != nil {
				t.Fatal(err)
			}
		}
		if err := errors.Join(f.Sync(), f.Close()); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.SyncDir(testDir); err != nil {
		t.Fatal(err)
	}
}

// dirContent returns every file of testDir with its content.
func dirContent(t *testing.T, fsys walfs.FS) map[string]string {
	t.Helper()
	names, err := fsys.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		b, err := fsys.ReadFile(walfs.Join(testDir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func dirNames(t *testing.T, fsys walfs.FS) string {
	t.Helper()
	n, err := fsys.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(n, " ")
}

// segmentRecords decodes the records of a segment file from its header on and
// returns their LSNs and the offset just past the last one.
func segmentRecords(t *testing.T, fsys walfs.FS, path string) (lsns []LSN, end int) {
	t.Helper()
	b, err := fsys.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	end = segmentHeaderBytes
	for {
		r, ok := decodeRecord(b, end)
		if !ok {
			return lsns, end
		}
		lsns = append(lsns, r.lsn)
		end = r.end
	}
}

// wrapFS is a FaultFS whose Create and OpenAppend hand out their files through wrap:
// the seam by which tests hold, count or shorten the log's file calls.
type wrapFS struct {
	*walfs.FaultFS
	wrap func(path string, f walfs.File) walfs.File
}

func (w *wrapFS) Create(path string) (walfs.File, error) {
	f, err := w.FaultFS.Create(path)
	if err != nil {
		return nil, err
	}
	return w.wrap(path, f), nil
}

func (w *wrapFS) OpenAppend(path string) (walfs.File, error) {
	f, err := w.FaultFS.OpenAppend(path)
	if err != nil {
		return nil, err
	}
	return w.wrap(path, f), nil
}

// gatedSyncFS is a FaultFS whose file Syncs, while armed, wait for the test: each
// announces itself on entered and goes on when release receives.
type gatedSyncFS struct {
	wrapFS
	armed            atomic.Bool
	entered, release chan struct{}
}

func newGatedSyncFS() *gatedSyncFS {
	g := &gatedSyncFS{entered: make(chan struct{}), release: make(chan struct{})}
	g.wrapFS = wrapFS{FaultFS: walfs.NewFaultFS(), wrap: func(_ string, f walfs.File) walfs.File { return &gatedFile{f, g} }}
	return g
}

type gatedFile struct {
	walfs.File
	g *gatedSyncFS
}

func (f *gatedFile) Sync() error {
	if f.g.armed.Load() {
		f.g.entered <- struct{}{}
		<-f.g.release
	}
	return f.File.Sync()
}

// waitSleeping waits until n WaitDurable calls sleep.
func waitSleeping(t *testing.T, l *Log, n int) {
	t.Helper()
	for start := time.Now(); ; time.Sleep(time.Millisecond) {
		l.mu.Lock()
		got := l.sleeping
		l.mu.Unlock()
		if got == n {
			return
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("%d waiters asleep, want %d", got, n)
		}
	}
}

// handleFS wraps a FaultFS and keeps account of the file handles the log opens and
// closes, of the Allocate calls and of every WriteAt; beforeWrite, if set, runs
// before each WriteAt (outside any lock of the file system).
type handleFS struct {
	wrapFS
	mu          sync.Mutex
	open        map[*handleFile]bool
	closedTwice []string
	allocs      int
	writes      []int // sizes of the WriteAt calls, in order
	beforeWrite func(path string, off int64)
	// shortWrite, if set, makes Write on the files it names write one byte less than
	// asked and report no error: a file system that breaks File's contract.
	shortWrite func(path string) bool
}

type handleFile struct {
	walfs.File
	fs     *handleFS
	path   string
	closed bool
}

func newHandleFS() *handleFS {
	h := &handleFS{open: map[*handleFile]bool{}}
	h.wrapFS = wrapFS{FaultFS: walfs.NewFaultFS(), wrap: h.track}
	return h
}

func (h *handleFS) track(path string, f walfs.File) walfs.File {
	hf := &handleFile{File: f, fs: h, path: path}
	h.mu.Lock()
	h.open[hf] = true
	h.mu.Unlock()
	return hf
}

func (f *handleFile) Close() error {
	f.fs.mu.Lock()
	if f.closed {
		f.fs.closedTwice = append(f.fs.closedTwice, f.path)
	}
	f.closed = true
	delete(f.fs.open, f)
	f.fs.mu.Unlock()
	return f.File.Close()
}

func (f *handleFile) Allocate(size int64) error {
	f.fs.mu.Lock()
	f.fs.allocs++
	f.fs.mu.Unlock()
	return f.File.Allocate(size)
}

func (f *handleFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	f.fs.writes = append(f.fs.writes, len(p))
	hook := f.fs.beforeWrite
	f.fs.mu.Unlock()
	if hook != nil {
		hook(f.path, off)
	}
	return f.File.WriteAt(p, off)
}

func (f *handleFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	short := f.fs.shortWrite != nil && f.fs.shortWrite(f.path) && len(p) > 0
	f.fs.mu.Unlock()
	if short {
		return f.File.Write(p[:len(p)-1])
	}
	return f.File.Write(p)
}

// leaks returns the paths of the handles still open and of those closed twice.
func (h *handleFS) leaks() (open, twice []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for f := range h.open {
		open = append(open, f.path)
	}
	return open, append([]string(nil), h.closedTwice...)
}

// holdFirstWrite makes the next record write to a segment wait: it returns a
// channel closed when that write is reached and a function that lets it go on.
func holdFirstWrite(h *handleFS) (reached <-chan struct{}, release func()) {
	r, rel := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.mu.Lock()
	h.beforeWrite = func(path string, off int64) {
		if strings.HasSuffix(path, segmentSuffix) && off >= segmentHeaderBytes {
			once.Do(func() { close(r); <-rel })
		}
	}
	h.mu.Unlock()
	var relOnce sync.Once
	return r, func() { relOnce.Do(func() { close(rel) }) }
}

// holdLeader appends rec and starts a WaitDurable of it that leads the commit, and
// returns once that leader is held inside its write (holdFirstWrite): the record's
// LSN, the channel that receives the leader's result, and the function that lets
// the write go on.
func holdLeader(t *testing.T, h *handleFS, l *Log, rec []byte) (lsn LSN, leader chan error, release func()) {
	t.Helper()
	reached, release := holdFirstWrite(h)
	lsn, err := l.Append(rec)
	if err != nil {
		release()
		t.Fatal(err)
	}
	leader = make(chan error, 1)
	go func() { leader <- l.WaitDurable(context.Background(), lsn) }()
	<-reached
	return lsn, leader, release
}

// shortWriteFile writes records to a segment one byte short and reports no error
// (WriteAt): a file system that breaks File's contract.
type shortWriteFile struct{ walfs.File }

func (f shortWriteFile) WriteAt(p []byte, off int64) (int, error) {
	if off >= segmentHeaderBytes && len(p) > 0 {
		return f.File.WriteAt(p[:len(p)-1], off)
	}
	return f.File.WriteAt(p, off)
}

// encodeSnapshot lays out a whole snapshot file, header then state: what a
// SnapshotWriter writes in pieces.
func encodeSnapshot(upto LSN, state []byte) []byte {
	return append(snapshotHeader(upto, int64(len(state)), crc32.Checksum(state, castagnoli)), state...)
}
