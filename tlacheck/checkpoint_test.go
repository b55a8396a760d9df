package tlacheck

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// stopAt runs cfg in the fingerprint mode with a checkpoint at every level, stopped
// (ErrLimit) past maxStates distinct states, as a killed run stops: the folder then
// holds the checkpoint of the last level it finished.
func stopAt(t *testing.T, spec, cfg, dir string, workers, maxStates int) {
	t.Helper()
	res, err := loadTestdata(t, spec, cfg).Check(Options{FingerprintBytes: 1 << 20, Workers: workers, Checkpoint: dir,
		CheckpointEvery: -1, CheckpointKey: cfg, MaxStates: maxStates})
	if !errors.Is(err, ErrLimit) {
		t.Fatalf("%s: the run was to stop past %d states: %v", cfg, maxStates, err)
	}
	if res.Checkpoints == 0 {
		t.Fatalf("%s: no checkpoint written before the stop at %d states", cfg, res.Distinct)
	}
}

// TestCheckpointRecover: a run stopped part way and recovered from its last checkpoint
// ends with the figures, the outcome and the counterexample of a run never stopped, with
// one worker and with two, on specs that pass and that violate an invariant. The run
// never stopped checkpoints too: with checkpoints one worker searches level by level,
// and a run that stops at a violation stops at the end of a batch (parallel.go).
func TestCheckpointRecover(t *testing.T) {
	for _, c := range []struct{ spec, cfg string }{
		{"TwoPhase", "TwoPhase_big"}, {"TwoPhase", "TwoPhase_symm"}, {"DieHard", "DieHard_solve"}, {"MutexBug", "MutexBug"}, {"Queue", "Queue"},
		{"SymPair", "SymPair"},
	} {
		for _, workers := range []int{1, 2} {
			whole, err := loadTestdata(t, c.spec, c.cfg).Check(Options{FingerprintBytes: 1 << 20, Workers: workers,
				Checkpoint: t.TempDir(), CheckpointEvery: -1, CheckpointKey: c.cfg})
			noErr(t, err)
			if whole.Distinct < 8 {
				t.Fatalf("%s: %d states: too few to stop part way", c.cfg, whole.Distinct)
			}
			dir := t.TempDir()
			stopAt(t, c.spec, c.cfg, dir, workers, int(whole.Distinct)/2)
			got, err := loadTestdata(t, c.spec, c.cfg).Check(Options{FingerprintBytes: 1 << 20, Workers: workers, Recover: dir, CheckpointKey: c.cfg})
			noErr(t, err)
			if got.Recovered == 0 || got.Recovered >= int(whole.Distinct) {
				t.Errorf("%s, %d workers: recovered from %d states of %d", c.cfg, workers, got.Recovered, whole.Distinct)
			}
			type figs struct {
				Outcome                   Outcome
				Invariant                 string
				Generated, Distinct       int64
				Depth, Queue, TraceLength int
			}
			fw := figs{whole.Outcome, whole.Invariant, whole.Generated, whole.Distinct, whole.Depth, whole.Queue, len(whole.Trace)}
			fg := figs{got.Outcome, got.Invariant, got.Generated, got.Distinct, got.Depth, got.Queue, len(got.Trace)}
			if fw != fg {
				t.Errorf("%s, %d workers: recovered %+v, never stopped %+v", c.cfg, workers, fg, fw)
			}
			if workers == 1 && !reflect.DeepEqual(whole.Trace, got.Trace) {
				t.Errorf("%s: the counterexample differs after the recovery:\n%v\n%v", c.cfg, got.Trace, whole.Trace)
			}
		}
	}
}

// TestCheckpointRefusals: a checkpoint of another run, of another set size, with a
// damaged file or a half-written manifest is refused or passed over as the case may
// be, never half used; checkpoints need the fingerprint mode and an empty folder.
func TestCheckpointRefusals(t *testing.T) {
	const spec, cfg = "TwoPhase", "TwoPhase_big"
	dir := t.TempDir()
	stopAt(t, spec, cfg, dir, 1, 4000)
	recoverWith := func(o Options) error {
		o.Recover = dir
		if o.FingerprintBytes == 0 {
			o.FingerprintBytes = 1 << 20
		}
		_, err := loadTestdata(t, spec, cfg).Check(o)
		return err
	}
	m, err := readManifest(dir)
	noErr(t, err)
	fpName, qName := m.files()
	damage := func(name string, f func(b []byte) []byte) func() {
		path := filepath.Join(dir, name)
		orig, err := os.ReadFile(path)
		noErr(t, err)
		noErr(t, os.WriteFile(path, f(append([]byte(nil), orig...)), 0o644))
		return func() { noErr(t, os.WriteFile(path, orig, 0o644)) }
	}
	for _, c := range []struct {
		name string
		o    Options
		harm func() func()
		want string
	}{
		{"another key", Options{CheckpointKey: "other"}, nil, "a checkpoint of another spec"},
		{"another set size", Options{CheckpointKey: cfg, FingerprintBytes: 1 << 21}, nil, "give the -fingerprints it was made with"},
		{"the exact mode", Options{CheckpointKey: cfg, FingerprintBytes: -1}, nil, "checkpoints are of the fingerprint mode"},
		{"a fingerprint lost", Options{CheckpointKey: cfg}, func() func() {
			return damage(fpName, func(b []byte) []byte {
				for i := 0; i < len(b); i += 8 {
					if string(b[i:i+8]) != "\x00\x00\x00\x00\x00\x00\x00\x00" {
						copy(b[i:i+8], make([]byte, 8))
						break
					}
				}
				return b
			})
		}, "holds"},
		{"a short set", Options{CheckpointKey: cfg}, func() func() { return damage(fpName, func(b []byte) []byte { return b[:len(b)-8] }) }, "bytes, not"},
		{"a state lost from the queue", Options{CheckpointKey: cfg}, func() func() { return damage(qName, func(b []byte) []byte { return b[:len(b)/2] }) }, "malformed record"},
		{"a trace too short", Options{CheckpointKey: cfg}, func() func() { return damage(traceName, func(b []byte) []byte { return b[:len(b)-1] }) }, "shorter than"},
		{"a manifest not JSON", Options{CheckpointKey: cfg}, func() func() { return damage(manifestName, func(b []byte) []byte { return b[:len(b)/2] }) }, manifestName},
	} {
		undo := func() {}
		if c.harm != nil {
			undo = c.harm()
		}
		o := c.o
		if o.FingerprintBytes < 0 {
			o.FingerprintBytes = 0
			o.Recover = dir
			_, err = loadTestdata(t, spec, cfg).Check(o)
		} else {
			err = recoverWith(o)
		}
		undo()
		if !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrCheckpoint saying %q", c.name, err, c.want)
		}
	}
	// A checkpoint of states keyed by signatures is refused to a run that keys them by
	// enumeration: the fingerprints are of other keys.
	symDir := t.TempDir()
	stopAt(t, "SymPair", "SymPair", symDir, 1, 600)
	_, err = loadTestdata(t, "SymPair", "SymPair").Check(Options{FingerprintBytes: 1 << 20, Recover: symDir, CheckpointKey: "SymPair", SymmetryByEnumeration: true})
	if want := "keyed by signatures, this run keys them by enumeration"; !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), want) {
		t.Errorf("another keying: %v, want ErrCheckpoint saying %q", err, want)
	}
	// A process killed while writing the next checkpoint leaves a manifest.tmp and
	// files of a later generation: the last whole checkpoint is recovered.
	noErr(t, os.WriteFile(filepath.Join(dir, manifestName+".tmp"), []byte(`{"version":1,"gen":`), 0o644))
	noErr(t, os.WriteFile(filepath.Join(dir, "fpset-999.bin"), []byte("half"), 0o644))
	if err := recoverWith(Options{CheckpointKey: cfg}); err != nil {
		t.Errorf("the last whole checkpoint was not recovered: %v", err)
	}
	// The control: recovered again, unharmed, it finishes.
	if err := recoverWith(Options{CheckpointKey: cfg}); err != nil {
		t.Errorf("recovering the unharmed checkpoint: %v", err)
	}
	if _, err := loadTestdata(t, spec, cfg).Check(Options{FingerprintBytes: 1 << 20, Checkpoint: dir, CheckpointKey: cfg}); !errors.Is(err, ErrCheckpoint) || !strings.Contains(err.Error(), "already holds a checkpoint") {
		t.Errorf("a new run into a folder holding a checkpoint: %v", err)
	}
}
