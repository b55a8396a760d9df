package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/walfs"
)

// FuzzLogRecovery: a log written by real operations (core commands appended through
// impl/wal and acknowledged with WaitDurable), then damaged by the fuzzer (bytes
// flipped or overwritten, files truncated, extended or removed). Recovery (wal.Open,
// then node.Recover) either refuses with a typed *wal.CorruptError, or rebuilds
// exactly the gate after the first n acknowledged records for some n: a prefix,
// never a re-admitted effect (the reference run admits each key once), and never a
// record whose bytes were damaged (its checksum fails).
//
// The input: byte 0 picks the template log (bit 0: with a snapshot in the middle);
// then 6-byte mutations: kind, file index, offset (uint16, modulo the file's
// length), value, and two bytes of extra value.
func FuzzLogRecovery(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{1})
	// A flip in the first record of the first segment.
	f.Add([]byte{0, mutFlip, 0, 40, 0, 0x01, 0, 0})
	// A torn tail: the last segment cut short.
	f.Add([]byte{0, mutTruncate, 0xff, 0xff, 0xf0, 0, 0, 0})
	// The snapshot damaged.
	f.Add([]byte{1, mutFlip, 0xfe, 0, 40, 0x80, 0, 0})
	// A middle segment removed.
	f.Add([]byte{0, mutRemove, 1, 0, 0, 0, 0, 0})
	// Garbage appended to the last segment, then a flip in it.
	f.Add([]byte{0, mutAppend, 0xff, 0, 0, 0x41, 8, 0, mutFlip, 0xff, 0xff, 0xff, 0x10, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		defer watchdog(t, "log recovery", data)()
		tpl := logTemplate(t, data[0]&1 == 1)
		files := tpl.clone()
		for m := data[1:]; len(m) >= mutBytes; m = m[mutBytes:] {
			files.mutate(m[:mutBytes])
		}
		checkRecovery(t, tpl, files)
	})
}

// execTimeMax bounds one execution of a target: Go's fuzzer has no timeout of its
// own, so a hang would otherwise pass silently.
const execTimeMax = 10 * time.Second

// watchdog panics (crashing the fuzz worker, which saves the input) when the
// execution is not finished within execTimeMax. Call the returned function at the end.
func watchdog(t *testing.T, what string, data []byte) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(execTimeMax):
			buf := make([]byte, 1<<20)
			n := runtime.Stack(buf, true)
			panic(fmt.Sprintf("%s did not finish within %v on input %x\n%s", what, execTimeMax, data, buf[:n]))
		}
	}()
	return func() { close(done) }
}

// Mutation kinds.
const (
	mutFlip      = iota // xor a byte with the value (0 means 0xff)
	mutSet              // set a byte to the value
	mutTruncate         // cut the file at the offset
	mutAppend           // append value-byte repeated (1 + extra%64) times
	mutRemove           // remove the file
	mutKinds            // the number of kinds
	mutBytes     = 7    // kind, file, offset (2), value, extra (2)
	segmentBytes = 1024 // small segments (the wal minimum): a short log spans several files
)

// logDir is where the template log lives on the in-memory file system.
const logDir = "/log"

// walTemplate is a log written by real operations, kept in memory.
type walTemplate struct {
	names []string            // file names, sorted
	files map[string][]byte   // name -> content
	recs  map[string][]recPos // segment name -> its records
	snap  wal.LSN             // the snapshot's LSN, 0 if none
	// states[n] is the gate (MarshalBinary) after the first n acknowledged records.
	states [][]byte
}

// recPos is where one record lies in its segment.
type recPos struct {
	lsn        wal.LSN
	start, end int
}

type fileSet struct {
	names []string
	files map[string][]byte
}

func (tpl *walTemplate) clone() *fileSet {
	fs := &fileSet{names: append([]string(nil), tpl.names...), files: map[string][]byte{}}
	for n, b := range tpl.files {
		fs.files[n] = bytes.Clone(b)
	}
	return fs
}

func (fs *fileSet) mutate(m []byte) {
	if len(fs.names) == 0 {
		return
	}
	name := fs.names[int(m[1])%len(fs.names)]
	b, ok := fs.files[name]
	if !ok {
		return // removed
	}
	off := int(binary.LittleEndian.Uint16(m[2:4]))
	val, extra := m[4], int(binary.LittleEndian.Uint16(m[5:7]))
	switch m[0] % mutKinds {
	case mutFlip:
		if len(b) > 0 {
			if val == 0 {
				val = 0xff
			}
			b[off%len(b)] ^= val
		}
	case mutSet:
		if len(b) > 0 {
			b[off%len(b)] = val
		}
	case mutTruncate:
		fs.files[name] = b[:off%(len(b)+1)]
	case mutAppend:
		fs.files[name] = append(b, bytes.Repeat([]byte{val}, 1+extra%64)...)
	case mutRemove:
		delete(fs.files, name)
	}
}

var (
	templateOnce [2]sync.Once
	templates    [2]*walTemplate
	templateErr  [2]error
)

// logTemplate builds (once per process) the log of a fixed random workload over an
// in-memory file system.
func logTemplate(t *testing.T, withSnapshot bool) *walTemplate {
	i := 0
	if withSnapshot {
		i = 1
	}
	templateOnce[i].Do(func() { templates[i], templateErr[i] = buildTemplate(withSnapshot) })
	if templateErr[i] != nil {
		t.Fatalf("building the template log: %v", templateErr[i])
	}
	return templates[i]
}

func buildTemplate(withSnapshot bool) (*walTemplate, error) {
	mfs := walfs.NewFaultFS()
	l, err := wal.Open(logDir, wal.Options{FS: mfs, SegmentBytes: segmentBytes})
	if err != nil {
		return nil, err
	}
	if err := l.Replay(func(wal.LSN, []byte) error { return nil }, func(wal.LSN, []byte) error { return nil }); err != nil {
		return nil, err
	}
	n := node.New(node.Config{Log: l, Now: func() core.Time { return 1 }})
	defer n.Close()
	state := func() ([]byte, error) {
		var b []byte
		var err error
		n.Inspect(func(g *core.Gate) { b, err = g.MarshalBinary() })
		return b, err
	}
	empty, _ := state()
	tpl := &walTemplate{files: map[string][]byte{}, recs: map[string][]recPos{}, states: [][]byte{empty}}
	admitted := map[string]bool{}
	rng := rand.New(rand.NewPCG(7, 7))
	runs, keys := []core.RunID{"run-a", "run-b", "run-c"}, []core.Key{"k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"}
	epochs := map[core.RunID]uint64{}
	for _, r := range runs {
		epochs[r] = 1
	}
	for step := 0; step < 400; step++ {
		r, k := runs[rng.IntN(len(runs))], keys[rng.IntN(len(keys))]
		c := core.Command{Run: r, Key: k, Now: 1}
		switch p := rng.IntN(100); {
		case p < 10 || step < len(runs):
			c.Op = core.OpOpen
			c.Run = runs[step%len(runs)]
		case p < 55:
			c.Op, c.Epoch, c.Gated = core.OpAdmit, epochs[r], rng.IntN(2) == 0
		case p < 75:
			c.Op, c.Decision = core.OpDecide, core.Approve
			if rng.IntN(4) == 0 {
				c.Decision = core.Reject
			}
		case p < 92:
			c.Op, c.Outcome, c.Result = core.OpComplete, core.OutcomeOK, fmt.Sprintf("result-%d", step)
		default:
			c.Op = core.OpFence
		}
		before := n.LastLSN()
		a := n.Apply(node.Request{Cmd: c})
		if a.Err != nil || a.After == before {
			continue // refused, or nothing changed: no record
		}
		rep := a.Reply
		if c.Op == core.OpAdmit && rep.Admit.Answer == core.AnswerAdmit {
			id := string(r) + "/" + string(k)
			if admitted[id] {
				return nil, fmt.Errorf("the reference run admitted %s twice", id)
			}
			admitted[id] = true
		}
		if c.Op == core.OpFence {
			epochs[r] = rep.Run.Epoch
		}
		lsn := a.After
		if err := n.Durable(lsn); err != nil {
			return nil, err
		}
		st, err := state()
		if err != nil {
			return nil, err
		}
		tpl.states = append(tpl.states, st)
		if withSnapshot && len(tpl.states) == 40 {
			if err := l.Snapshot(lsn, st); err != nil {
				return nil, err
			}
			tpl.snap = lsn
		}
	}
	if err := l.Close(); err != nil {
		return nil, err
	}
	names, err := mfs.ReadDir(logDir)
	if err != nil {
		return nil, err
	}
	for _, n := range names {
		b, err := mfs.ReadFile(filepath.Join(logDir, n))
		if err != nil {
			return nil, err
		}
		tpl.names = append(tpl.names, n)
		tpl.files[n] = b
		if filepath.Ext(n) == ".wal" {
			tpl.recs[n] = parseSegment(b)
		}
	}
	if len(tpl.names) < 4 {
		return nil, fmt.Errorf("the template log has %d files (%d records), want several segments", len(tpl.names), len(tpl.states)-1)
	}
	return tpl, nil
}

// parseSegment lists a segment's records by the layout of docs/wal.md: a 32-byte
// header, then records of a 20-byte header (crc, length, lsn, crc) and a payload.
func parseSegment(b []byte) []recPos {
	var out []recPos
	for off := 32; off+20 <= len(b); {
		n := int(binary.LittleEndian.Uint32(b[off+4:]))
		lsn := wal.LSN(binary.LittleEndian.Uint64(b[off+8:]))
		end := off + 20 + n
		if end > len(b) {
			break
		}
		out = append(out, recPos{lsn: lsn, start: off, end: end})
		off = end
	}
	return out
}

// checkRecovery recovers files and checks the properties; it reports whether
// recovery refused (a corruption error) and otherwise the last LSN it recovered.
func checkRecovery(t *testing.T, tpl *walTemplate, files *fileSet) (refused bool, last wal.LSN) {
	mfs := walfs.NewFaultFS()
	if err := mfs.MkdirAll(logDir); err != nil {
		t.Fatal(err)
	}
	for _, n := range files.names {
		b, ok := files.files[n]
		if !ok {
			continue
		}
		f, err := mfs.Create(filepath.Join(logDir, n))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(b); err != nil {
			t.Fatal(err)
		}
		f.Sync()
		f.Close()
	}
	mfs.SyncDir(logDir)

	l, err := wal.Open(logDir, wal.Options{FS: mfs, SegmentBytes: segmentBytes})
	if err != nil {
		var ce *wal.CorruptError
		if !errors.As(err, &ce) {
			t.Fatalf("wal.Open refused with an untyped error: %v", err)
		}
		return true, 0
	}
	defer l.Close()
	n, err := node.Recover(l, node.Config{})
	if err != nil {
		var ce *wal.CorruptError
		if errors.As(err, &ce) {
			return true, 0
		}
		t.Fatalf("recovery failed without a corruption error (a damaged record was accepted?): %v", err)
	}
	defer n.Close()
	last = n.LastLSN()
	if int(last) >= len(tpl.states) {
		t.Fatalf("recovered up to LSN %d, but only %d records were ever written", last, len(tpl.states)-1)
	}
	var got []byte
	n.Inspect(func(g *core.Gate) { got, err = g.MarshalBinary() })
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, tpl.states[last]) {
		t.Fatalf("the recovered gate (last LSN %d) is not the gate after the first %d acknowledged records", last, last)
	}
	// No record that recovery replayed may differ from what was written.
	snap := wal.LSN(0)
	for n := range tpl.files {
		if filepath.Ext(n) == ".snap" && bytes.Equal(files.files[n], tpl.files[n]) {
			snap = tpl.snap
		}
	}
	for name, recs := range tpl.recs {
		now, ok := files.files[name]
		for _, r := range recs {
			if r.lsn <= snap || r.lsn > last {
				continue
			}
			if !ok || r.end > len(now) || !bytes.Equal(now[r.start:r.end], tpl.files[name][r.start:r.end]) {
				t.Fatalf("record %d (%s at %d) was damaged, yet recovery replayed up to LSN %d", r.lsn, name, r.start, last)
			}
		}
	}
	return false, last
}

// TestLogRecoveryOutcomes pins what recovery does with a few damages, so that the
// fuzz target is known to see both of its outcomes (refusal and a shorter prefix).
func TestLogRecoveryOutcomes(t *testing.T) {
	tpl := logTemplate(t, false)
	full := wal.LSN(len(tpl.states) - 1)
	lastSeg := len(tpl.names) - 1
	tests := []struct {
		name        string
		muts        [][]byte
		wantRefused bool
		wantLast    func(wal.LSN) bool
	}{
		{"intact", nil, false, func(l wal.LSN) bool { return l == full }},
		{"torn tail", [][]byte{{mutTruncate, byte(lastSeg), 0xf0, 0xff, 0, 0, 0}}, false, func(l wal.LSN) bool { return l < full }},
		{"flip in the first record", [][]byte{{mutFlip, 0, 40, 0, 1, 0, 0}}, true, nil},
		{"first segment removed", [][]byte{{mutRemove, 0, 0, 0, 0, 0, 0}}, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files := tpl.clone()
			for _, m := range tc.muts {
				files.mutate(m)
			}
			refused, last := checkRecovery(t, tpl, files)
			if refused != tc.wantRefused || (!refused && !tc.wantLast(last)) {
				t.Errorf("refused %t, last LSN %d (of %d); want refused %t", refused, last, full, tc.wantRefused)
			}
		})
	}
}
