package tlacheck

import (
	"bytes"
	"os"
	"reflect"
	"testing"
)

// TestDecodeIsEncodesInverse: every value kind, nested, decodes from its encoding to
// a value with the same encoding; a cut or corrupt encoding is an error, not a value.
func TestDecodeIsEncodesInverse(t *testing.T) {
	vals := []Value{
		Bool(true), Bool(false), Int(0), Int(-5), Int(1 << 40), Str(""), Str("held"), ModelValue("r1"),
		mkSet(nil), mkSet([]Value{Int(3), Int(1), ModelValue("k2")}),
		mkTuple([]Value{Str("a"), mkSet([]Value{Bool(true)})}),
		mkFunc([]Value{ModelValue("r1"), ModelValue("r2")}, []Value{mkFunc([]Value{ModelValue("k1")}, []Value{Str("absent")}), Int(2)}),
		mkFunc([]Value{Str("answer"), Str("reason")}, []Value{Str("denied"), Str("retired")}),
		mkFunc(nil, nil),
	}
	for _, v := range vals {
		enc := encode(nil, v)
		d := decoder{b: enc}
		got := d.value()
		if d.err != nil || len(d.b) != 0 {
			t.Fatalf("%v: %v, %d bytes left", v, d.err, len(d.b))
		}
		if !bytes.Equal(encode(nil, got), enc) || compare(got, v) != 0 {
			t.Errorf("%v decoded as %v", v, got)
		}
		for cut := 0; cut < len(enc); cut++ {
			d := decoder{b: enc[:cut]}
			d.value()
			if d.err == nil {
				t.Errorf("%v: the first %d bytes decoded", v, cut)
			}
		}
	}
	d := decoder{b: []byte{99}}
	d.value()
	if d.err == nil {
		t.Error("an unknown tag decoded")
	}
}

// TestStateQueueSpills: states come back in order with their depths whether their
// chunk stayed in memory, went to the file, or was still being written; the file is
// reused once read, and the queue counts what it spilled.
func TestStateQueueSpills(t *testing.T) {
	defer func(n int) { queueChunkBytes = n }(queueChunkBytes)
	queueChunkBytes = 64
	for _, budget := range []int64{0, 100, 1 << 20} {
		q := newStateQueue(2, budget, t.TempDir())
		var want [][]Value
		push := func(n int) {
			for i := 0; i < n; i++ {
				st := []Value{Int(int64(len(want))), mkSet([]Value{Str("x"), Int(int64(i))})}
				if err := q.push(st, uint16(len(want)%7)); err != nil {
					t.Fatal(err)
				}
				want = append(want, st)
			}
		}
		popped := 0
		pop := func(n int) {
			for i := 0; i < n; i++ {
				st, d, ok, err := q.pop()
				if err != nil || !ok {
					t.Fatalf("budget %d: pop %d: ok %t, %v", budget, popped, ok, err)
				}
				if !reflect.DeepEqual(encode(encode(nil, st[0]), st[1]), encode(encode(nil, want[popped][0]), want[popped][1])) || d != uint16(popped%7) {
					t.Fatalf("budget %d: state %d came back as %v at depth %d", budget, popped, st, d)
				}
				popped++
			}
		}
		push(100)
		pop(30)
		push(50)
		pop(120)
		if _, _, ok, err := q.pop(); ok || err != nil {
			t.Fatalf("budget %d: an empty queue popped (%t, %v)", budget, ok, err)
		}
		if spilled := q.spilled > 0; spilled != (budget < 1<<20) {
			t.Errorf("budget %d: %d bytes spilled", budget, q.spilled)
		}
		if q.inFile != 0 || q.fileEnd != 0 {
			t.Errorf("budget %d: %d chunks left in the file, end %d", budget, q.inFile, q.fileEnd)
		}
		q.close()
	}
}

// TestFingerprintModeSpillsItsQueue: with a queue budget too small for the states
// waiting, the run spills them and still gives TLC's figures and the same trace.
func TestFingerprintModeSpillsItsQueue(t *testing.T) {
	defer func(n int) { queueChunkBytes = n }(queueChunkBytes)
	queueChunkBytes = 4096
	dir := t.TempDir()
	for _, cfg := range []string{"TwoPhase_big", "MutexBug"} {
		spec := map[string]string{"TwoPhase_big": "TwoPhase", "MutexBug": "MutexBug"}[cfg]
		exact, err := loadTestdata(t, spec, cfg).Check(Options{})
		noErr(t, err)
		res, err := loadTestdata(t, spec, cfg).Check(Options{FingerprintBytes: 1 << 20, QueueBytes: 1, QueueDir: dir})
		noErr(t, err)
		if res.Generated != exact.Generated || res.Distinct != exact.Distinct || res.Depth != exact.Depth || !reflect.DeepEqual(res.Trace, exact.Trace) {
			t.Errorf("%s: spilled %d/%d/%d, exact %d/%d/%d", cfg, res.Generated, res.Distinct, res.Depth, exact.Generated, exact.Distinct, exact.Depth)
		}
		if cfg == "TwoPhase_big" && res.QueueSpilled == 0 {
			t.Errorf("%s: nothing spilled", cfg)
		}
	}
	left, err := os.ReadDir(dir)
	noErr(t, err)
	if len(left) != 0 {
		t.Errorf("the queue left %d files", len(left))
	}
}
