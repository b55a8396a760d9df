package walfs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Op names a file-system operation, for fault injection and counting.
type Op int

// The operations of the seam that FaultFS can fail.
const (
	OpWrite Op = iota
	OpSync
	OpTruncate
	OpCreate
	OpOpenAppend
	OpReadFile
	OpRename
	OpRemove
	OpSyncDir
	OpAllocate
	opCount
)

var opNames = [opCount]string{"write", "sync", "truncate", "create", "open", "read", "rename", "remove", "syncdir", "allocate"}

// String returns the operation's name, as in error messages and traces.
func (o Op) String() string {
	if o < 0 || o >= opCount {
		return fmt.Sprintf("op(%d)", int(o))
	}
	return opNames[o]
}

// ErrCrashed is returned by every operation on a FaultFS handle opened before Crash,
// and by the operation during which a scheduled crash (CrashAtOp) happens.
var ErrCrashed = errors.New("soundgate/walfs: simulated crash")

// ErrInjected is the default error of an injected fault.
var ErrInjected = errors.New("soundgate/walfs: injected fault")

// Fault is a one-shot failure of the next matching operation.
type Fault struct {
	// Op is the operation to fail.
	Op Op
	// Path, if not empty, restricts the fault to operations on this base name suffix
	// (for example ".wal" or "snap-").
	Path string
	// Skip lets this many matching operations succeed before the fault fires.
	Skip int
	// Err is the error returned (wrapped in *fs.PathError); ErrInjected if nil.
	Err error
	// ShortBytes, for OpWrite, is how many bytes of the write reach the file before
	// the error: a short write.
	ShortBytes int
}

// FaultFS is an in-memory FS that injects faults and simulates crashes. It is safe
// for concurrent use. The zero value is not usable; call NewFaultFS.
//
// Durability model. A file's durable content is its content at its last Sync. A
// directory's durable entries are its entries at its last SyncDir. Crash replaces
// the visible state by what a machine crash could leave:
//
//   - entries: the durable entries, plus a random prefix (in order) of the creates,
//     renames and removes done since the last SyncDir (journaled metadata is
//     applied in order);
//   - content: each file's durable content, plus a random prefix of the writes done
//     to it since its last Sync, applied in order (page cache written back in
//     order; the last write kept may be cut anywhere, leaving a torn record). An
//     Allocate counts as a write of zeros. A file truncated below its durable size
//     since its last Sync keeps its durable content, or (the file system journals
//     a truncation on its own) that content cut to the shortest length it was
//     truncated to, with none of the writes since.
//
// With a nil random source, Crash keeps exactly the durable state.
type FaultFS struct {
	mu       sync.Mutex
	gen      int                // incremented by Crash: older handles are dead
	names    map[string]*inode  // visible namespace: path -> inode
	durNames map[string]*inode  // namespace as of the last SyncDir of each dir
	dirOps   map[string][]dirOp // per directory: namespace changes since its last SyncDir
	dirs     map[string]bool    // directories (durable on creation, for simplicity)
	faults   []Fault            // pending one-shot faults
	capacity int64              // bytes of content allowed in total; 0: unlimited
	ops      [opCount]int64     // counts of operations
	crashAt  int64              // crash when the mutating op count reaches this; 0: never
	crashRng *rand.Rand         // random source of the scheduled crash
	nMut     int64              // mutating operations so far
	crashed  bool               // a scheduled crash happened (until Restart)
	down     bool               // crashed and not restarted: every operation fails
	onCrash  func()             // called (with mu held) when a scheduled crash happens
	trace    []string           // the last traceMax operations, for failure reports
	locks    map[string]bool    // paths locked by Lock (released by a crash)
	syncWait time.Duration      // each successful Sync takes this long (outside mu)
	noAlloc  bool               // File.Allocate answers ErrAllocateUnsupported
}

type inode struct {
	data      []byte
	durable   []byte
	pending   []span // writes since the last Sync, in order (what a crash may keep)
	truncated bool   // truncated below its durable length since the last Sync
	cutTo     int64  // if truncated: the shortest length truncated to since then
}

// span is one write: b at offset off.
type span struct {
	off int64
	b   []byte
}

// write applies p at off to the visible content (zero-filling a gap past the end)
// and records it as pending.
func (n *inode) write(p []byte, off int64) {
	if gap := off - int64(len(n.data)); gap > 0 {
		n.pending = append(n.pending, span{off: int64(len(n.data)), b: make([]byte, gap)})
		n.data = append(n.data, make([]byte, gap)...)
	}
	n.pending = append(n.pending, span{off: off, b: append([]byte(nil), p...)})
	if end := off + int64(len(p)); end > int64(len(n.data)) {
		n.data = append(n.data, make([]byte, end-int64(len(n.data)))...)
	}
	copy(n.data[off:], p)
}

// crashContent is what a crash leaves of the file: the durable content plus the
// first keep bytes of the pending writes, in order.
func (n *inode) crashContent(keep int) []byte {
	out := append([]byte(nil), n.durable...)
	for _, w := range n.pending {
		if keep <= 0 {
			break
		}
		b := w.b[:min(len(w.b), keep)]
		keep -= len(b)
		if end := w.off + int64(len(b)); end > int64(len(out)) {
			out = append(out, make([]byte, end-int64(len(out)))...)
		}
		copy(out[w.off:], b)
	}
	return out
}

func (n *inode) pendingBytes() int {
	t := 0
	for _, w := range n.pending {
		t += len(w.b)
	}
	return t
}

type dirOp struct {
	kind     string // "create", "rename", "remove"
	from, to string
	node     *inode
}

// NewFaultFS returns an empty in-memory file system with no faults.
func NewFaultFS() *FaultFS {
	return &FaultFS{
		names:    map[string]*inode{},
		durNames: map[string]*inode{},
		dirOps:   map[string][]dirOp{},
		dirs:     map[string]bool{},
		locks:    map[string]bool{},
	}
}

var _ FS = (*FaultFS)(nil)

// Inject schedules a one-shot fault. Faults fire in the order they were injected.
func (m *FaultFS) Inject(f Fault) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = append(m.faults, f)
}

// SetCapacity limits the total bytes of content across files; a write beyond it is
// cut short with ENOSPC. Zero means unlimited.
func (m *FaultFS) SetCapacity(bytes int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.capacity = bytes
}

// SetAllocate turns File.Allocate on (the default, as on Linux) or off (it then
// answers ErrAllocateUnsupported, as on a file system without fallocate).
func (m *FaultFS) SetAllocate(on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.noAlloc = !on
}

// SetSyncDelay makes every Sync take d, like a disk flush, so that tests can observe
// group commit. The delay is spent without holding the file system's lock.
func (m *FaultFS) SetSyncDelay(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.syncWait = d
}

// CrashAtOp schedules a crash during the n-th mutating operation from now (writes,
// syncs, truncates, creates, renames, removes, directory syncs; n >= 1). A write
// reaches the page cache before the crash, so it may survive torn. The operation and
// every later one on handles opened before the crash return ErrCrashed, and the file
// system's visible state becomes a crash state drawn from rng (see FaultFS).
// onCrash, if not nil, is called when the crash happens.
func (m *FaultFS) CrashAtOp(n int64, rng *rand.Rand, onCrash func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashAt = m.nMut + n
	m.crashRng = rng
	m.onCrash = onCrash
}

// Crashed reports whether a scheduled crash happened since the last Restart.
func (m *FaultFS) Crashed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashed
}

// Ops returns how many operations of kind op were attempted.
func (m *FaultFS) Ops(op Op) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops[op]
}

// Crash simulates a machine crash now: see the durability model on FaultFS. Handles
// opened before the crash fail with ErrCrashed from now on, and so does every
// operation until Restart (the crashed program is dead: a goroutine of it that is
// still running must not touch the disk).
func (m *FaultFS) Crash(rng *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashLocked(rng)
}

// Restart brings the file system back after a crash, for the next life of the
// program, and clears the crashed flag, a scheduled crash and pending faults. Call it
// once every goroutine of the crashed life has stopped.
func (m *FaultFS) Restart() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crashed = false
	m.down = false
	m.crashAt = 0
	m.onCrash = nil
	m.faults = nil
}

func (m *FaultFS) crashLocked(rng *rand.Rand) {
	m.gen++
	m.down = true
	m.locks = map[string]bool{} // the crashed program's locks die with it
	m.note("CRASH")
	// Namespace: durable entries plus a random prefix of each directory's changes.
	names := make(map[string]*inode, len(m.durNames))
	for p, n := range m.durNames {
		names[p] = n
	}
	dirs := make([]string, 0, len(m.dirOps))
	for d := range m.dirOps {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs) // deterministic use of rng
	for _, d := range dirs {
		ops := m.dirOps[d]
		keep := 0
		if rng != nil {
			keep = rng.IntN(len(ops) + 1)
		}
		for _, op := range ops[:keep] {
			applyDirOp(names, op)
		}
		for _, op := range ops[keep:] {
			m.note("  lost: %s %s -> %s", op.kind, filepath.Base(op.from), filepath.Base(op.to))
		}
	}
	m.names = names
	m.durNames = make(map[string]*inode, len(names))
	for p, n := range names {
		m.durNames[p] = n
	}
	m.dirOps = map[string][]dirOp{}
	// Content: durable bytes plus a random prefix of the unsynced writes.
	paths := make([]string, 0, len(names))
	for p := range names {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	seen := map[*inode]bool{}
	for _, p := range paths {
		n := names[p]
		if seen[n] {
			continue
		}
		seen[n] = true
		keep := 0
		if rng != nil && !n.truncated {
			keep = rng.IntN(n.pendingBytes() + 1)
		}
		n.data = n.crashContent(keep)
		if rng != nil && n.truncated && rng.IntN(2) == 0 {
			n.data = n.data[:n.cutTo]
		}
		n.durable = append([]byte(nil), n.data...)
		n.pending = nil
		n.truncated = false
	}
}

func applyDirOp(names map[string]*inode, op dirOp) {
	switch op.kind {
	case "create":
		names[op.to] = op.node
	case "rename":
		if n, ok := names[op.from]; ok {
			delete(names, op.from)
			names[op.to] = n
		}
	case "remove":
		delete(names, op.from)
	}
}

// traceMax is how many recent operations Trace returns.
const traceMax = 400

func (m *FaultFS) note(format string, args ...any) {
	if len(m.trace) >= traceMax {
		m.trace = append(m.trace[:0], m.trace[len(m.trace)-traceMax/2:]...)
	}
	m.trace = append(m.trace, fmt.Sprintf(format, args...))
}

// Trace returns the most recent operations (up to a few hundred), oldest first, for
// a failure report.
func (m *FaultFS) Trace() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.trace...)
}

// begin accounts an operation, fires a matching fault, and runs a scheduled crash.
// It returns the fault (if one fired) and whether a scheduled crash fires with this op.
// Called with m.mu held.
func (m *FaultFS) begin(op Op, path string) (fault *Fault, crash bool) {
	m.ops[op]++
	m.note("%s %s", op, filepath.Base(path))
	if op != OpReadFile {
		m.nMut++
		if m.crashAt > 0 && m.nMut >= m.crashAt && !m.crashed {
			crash = true
		}
	}
	for i := range m.faults {
		f := &m.faults[i]
		if f.Op != op || (f.Path != "" && !matchPath(path, f.Path)) {
			continue
		}
		if f.Skip > 0 {
			f.Skip--
			return nil, crash
		}
		fired := *f
		m.faults = append(m.faults[:i], m.faults[i+1:]...)
		if fired.Err == nil {
			fired.Err = ErrInjected
		}
		return &fired, crash
	}
	return nil, crash
}

func matchPath(path, pattern string) bool {
	base := filepath.Base(path)
	return bytes.Contains([]byte(base), []byte(pattern))
}

func (m *FaultFS) doCrash() error {
	m.crashed = true
	m.crashAt = 0
	m.crashLocked(m.crashRng)
	if m.onCrash != nil {
		m.onCrash()
	}
	return ErrCrashed
}

// enter starts operation op of the file system on path, with m.mu held: it refuses
// while the file system is down, then fires (see fire). It returns the cleaned path.
func (m *FaultFS) enter(op Op, path string) (string, error) {
	if m.down {
		return path, pathErr(op, path, ErrCrashed)
	}
	path = filepath.Clean(path)
	return path, m.fire(op, path)
}

// enterFile is enter for an operation on an existing file: it also returns the
// file, or refuses a path that names none.
func (m *FaultFS) enterFile(op Op, path string) (string, *inode, error) {
	path, err := m.enter(op, path)
	if err != nil {
		return path, nil, err
	}
	n, ok := m.names[path]
	if !ok {
		return path, nil, pathErr(op, path, fs.ErrNotExist)
	}
	return path, n, nil
}

// fire counts operation op on path and runs the crash scheduled for it or the fault
// injected for it, whose error ends the operation. Called with m.mu held.
func (m *FaultFS) fire(op Op, path string) error {
	f, crash := m.begin(op, path)
	if crash {
		return pathErr(op, path, m.doCrash())
	}
	if f != nil {
		return pathErr(op, path, f.Err)
	}
	return nil
}

func pathErr(op Op, path string, err error) error {
	return &fs.PathError{Op: op.String(), Path: path, Err: err}
}

func (m *FaultFS) dirOf(path string) string { return filepath.Dir(path) }

// MkdirAll creates dir (directories are durable at once in this model).
func (m *FaultFS) MkdirAll(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return pathErr(OpCreate, dir, ErrCrashed)
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		m.dirs[d] = true
		if d == filepath.Dir(d) {
			break
		}
	}
	return nil
}

// ReadDir lists the visible entries of dir.
func (m *FaultFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, pathErr(OpReadFile, dir, ErrCrashed)
	}
	dir = filepath.Clean(dir)
	if !m.dirs[dir] {
		return nil, pathErr(OpReadFile, dir, fs.ErrNotExist)
	}
	var out []string
	for p := range m.names {
		if filepath.Dir(p) == dir {
			out = append(out, filepath.Base(p))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Create creates a new empty file.
func (m *FaultFS) Create(path string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path, err := m.enter(OpCreate, path)
	if err != nil {
		return nil, err
	}
	if !m.dirs[m.dirOf(path)] {
		return nil, pathErr(OpCreate, path, fs.ErrNotExist)
	}
	if _, ok := m.names[path]; ok {
		return nil, pathErr(OpCreate, path, fs.ErrExist)
	}
	n := &inode{}
	m.names[path] = n
	d := m.dirOf(path)
	m.dirOps[d] = append(m.dirOps[d], dirOp{kind: "create", to: path, node: n})
	return &faultFile{fs: m, gen: m.gen, path: path, node: n}, nil
}

// OpenAppend opens an existing file for appending.
func (m *FaultFS) OpenAppend(path string) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path, n, err := m.enterFile(OpOpenAppend, path)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: m, gen: m.gen, path: path, node: n, off: int64(len(n.data))}, nil
}

// ReadFile returns a copy of the visible content.
func (m *FaultFS) ReadFile(path string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, n, err := m.enterFile(OpReadFile, path) // reads never crash: they are not counted as mutating
	if err != nil {
		return nil, err
	}
	return append([]byte(nil), n.data...), nil
}

// Rename renames a file, replacing the target.
func (m *FaultFS) Rename(oldPath, newPath string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	newPath, err := m.enter(OpRename, newPath)
	if err != nil {
		return err
	}
	oldPath = filepath.Clean(oldPath)
	n, ok := m.names[oldPath]
	if !ok {
		return pathErr(OpRename, oldPath, fs.ErrNotExist)
	}
	if m.dirOf(oldPath) != m.dirOf(newPath) {
		return pathErr(OpRename, newPath, errors.New("cross-directory rename not modelled"))
	}
	delete(m.names, oldPath)
	m.names[newPath] = n
	d := m.dirOf(newPath)
	m.dirOps[d] = append(m.dirOps[d], dirOp{kind: "rename", from: oldPath, to: newPath})
	return nil
}

// Remove removes a file.
func (m *FaultFS) Remove(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	path, _, err := m.enterFile(OpRemove, path)
	if err != nil {
		return err
	}
	delete(m.names, path)
	d := m.dirOf(path)
	m.dirOps[d] = append(m.dirOps[d], dirOp{kind: "remove", from: path})
	return nil
}

// SyncDir makes dir's entries durable.
func (m *FaultFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir, err := m.enter(OpSyncDir, dir)
	if err != nil {
		return err
	}
	for _, op := range m.dirOps[dir] {
		applyDirOp(m.durNames, op)
	}
	delete(m.dirOps, dir)
	return nil
}

// Lock takes an in-memory exclusive lock on path; a crash releases it.
func (m *FaultFS) Lock(path string) (io.Closer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	path = filepath.Clean(path)
	if m.down {
		return nil, pathErr(OpCreate, path, ErrCrashed)
	}
	if m.locks[path] {
		return nil, &fs.PathError{Op: "lock", Path: path, Err: ErrLocked}
	}
	m.locks[path] = true
	return &faultLock{fs: m, path: path, gen: m.gen}, nil
}

type faultLock struct {
	fs   *FaultFS
	path string
	gen  int
	once sync.Once
}

func (l *faultLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		defer l.fs.mu.Unlock()
		if l.gen == l.fs.gen {
			delete(l.fs.locks, l.path)
		}
	})
	return nil
}

// Corrupt flips the bits of mask in the byte at offset off of a file's visible and
// durable content, as a disk error would. It returns an error if there is no such byte.
func (m *FaultFS) Corrupt(path string, off int64, mask byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.names[filepath.Clean(path)]
	if !ok || off < 0 || off >= int64(len(n.data)) {
		return fmt.Errorf("soundgate/walfs: corrupt %s at %d: no such byte", path, off)
	}
	n.data[off] ^= mask
	if off < int64(len(n.durable)) {
		n.durable[off] ^= mask
	}
	return nil
}

// Size returns the visible size of a file, or -1 if it does not exist.
func (m *FaultFS) Size(path string) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.names[filepath.Clean(path)]
	if !ok {
		return -1
	}
	return int64(len(n.data))
}

func (m *FaultFS) totalBytes() int64 {
	var t int64
	seen := map[*inode]bool{}
	for _, n := range m.names {
		if !seen[n] {
			seen[n] = true
			t += int64(len(n.data))
		}
	}
	return t
}

type faultFile struct {
	fs     *FaultFS
	gen    int
	path   string
	node   *inode
	off    int64 // where Write writes next: 0 after Create, the end after OpenAppend
	closed bool
}

func (f *faultFile) check(op Op) error {
	if f.closed {
		return pathErr(op, f.path, os.ErrClosed)
	}
	if f.gen != f.fs.gen || f.fs.down {
		return pathErr(op, f.path, ErrCrashed)
	}
	return nil
}

// do runs body, operation op on the handle, with the file system locked, unless the
// handle is closed or was opened before a crash: the checks every operation makes.
func (f *faultFile) do(op Op, body func(m *FaultFS) error) error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := f.check(op); err != nil {
		return err
	}
	return body(m)
}

// Write writes p at the handle's offset, honouring faults, capacity and scheduled
// crashes.
func (f *faultFile) Write(p []byte) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	n, err := f.writeAtLocked(p, f.off)
	f.off += int64(n)
	return n, err
}

// WriteAt writes p at off, honouring faults, capacity and scheduled crashes.
func (f *faultFile) WriteAt(p []byte, off int64) (int, error) {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	return f.writeAtLocked(p, off)
}

func (f *faultFile) writeAtLocked(p []byte, off int64) (int, error) {
	m := f.fs
	if err := f.check(OpWrite); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr(OpWrite, f.path, errors.New("negative offset"))
	}
	fault, crash := m.begin(OpWrite, f.path)
	n := len(p)
	var err error
	if fault != nil {
		n = min(max(fault.ShortBytes, 0), len(p))
		err = fault.Err
	}
	if m.capacity > 0 {
		// Only bytes past the end need room; an overwrite of allocated space does not.
		grow := max(off+int64(n)-int64(len(f.node.data)), 0)
		if room := max(m.capacity-m.totalBytes(), 0); grow > room {
			n = int(max(int64(len(f.node.data))+room-off, 0))
			err = syscall.ENOSPC
		}
	}
	f.node.write(p[:n], off)
	if crash {
		return n, pathErr(OpWrite, f.path, m.doCrash())
	}
	if err != nil {
		return n, pathErr(OpWrite, f.path, err)
	}
	return n, nil
}

// Sync makes the content durable.
func (f *faultFile) Sync() error {
	m := f.fs
	m.mu.Lock()
	d := m.syncWait
	m.mu.Unlock()
	if d > 0 {
		time.Sleep(d)
	}
	return f.do(OpSync, func(m *FaultFS) error {
		if err := m.fire(OpSync, f.path); err != nil {
			// Like Linux after a failed writeback: the pages may be marked clean and the
			// error reported once; what reached the disk is unknown. Keep the old durable
			// content (the pessimistic case).
			return err
		}
		f.node.durable = append(f.node.durable[:0], f.node.data...)
		f.node.pending = nil
		f.node.truncated = false
		return nil
	})
}

// Allocate grows the file with zeros to size (a pending write of zeros), unless
// SetAllocate(false) or a fault; a full file system answers ENOSPC.
func (f *faultFile) Allocate(size int64) error {
	return f.do(OpAllocate, func(m *FaultFS) error {
		if m.noAlloc {
			return pathErr(OpAllocate, f.path, ErrAllocateUnsupported)
		}
		if err := m.fire(OpAllocate, f.path); err != nil {
			return err
		}
		grow := size - int64(len(f.node.data))
		if grow <= 0 {
			return nil
		}
		if m.capacity > 0 && grow > m.capacity-m.totalBytes() {
			return pathErr(OpAllocate, f.path, syscall.ENOSPC)
		}
		f.node.write(make([]byte, grow), int64(len(f.node.data)))
		return nil
	})
}

// Truncate cuts the file.
func (f *faultFile) Truncate(size int64) error {
	return f.do(OpTruncate, func(m *FaultFS) error {
		if err := m.fire(OpTruncate, f.path); err != nil {
			return err
		}
		if size < 0 || size > int64(len(f.node.data)) {
			return pathErr(OpTruncate, f.path, errors.New("truncate beyond end not modelled"))
		}
		f.node.data = f.node.data[:size]
		if size < int64(len(f.node.durable)) {
			if !f.node.truncated || size < f.node.cutTo {
				f.node.cutTo = size
			}
			f.node.truncated = true
		}
		// Pending writes past the new end are gone with it.
		kept := f.node.pending[:0]
		for _, w := range f.node.pending {
			if w.off >= size {
				continue
			}
			if w.off+int64(len(w.b)) > size {
				w.b = w.b[:size-w.off]
			}
			kept = append(kept, w)
		}
		f.node.pending = kept
		if f.off > size {
			f.off = size
		}
		return nil
	})
}

// Close closes the handle.
func (f *faultFile) Close() error {
	m := f.fs
	m.mu.Lock()
	defer m.mu.Unlock()
	if f.closed {
		return pathErr(OpWrite, f.path, os.ErrClosed)
	}
	f.closed = true
	return nil
}
