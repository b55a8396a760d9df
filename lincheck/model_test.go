package lincheck

import (
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/soundgate/soundgate/model"
)

// op builds an operation for the synthetic histories below.
func op(client int, call, ret int64, in Input, out Output) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

var (
	openR    = Input{Action: model.ActOpen, Run: "r"}
	admitK0  = Input{Action: model.ActAdmit, Run: "r", Key: 0, Epoch: 1}
	gatedK0  = Input{Action: model.ActAdmit, Run: "r", Key: 0, Epoch: 1, Gated: true}
	approve0 = Input{Action: model.ActDecide, Run: "r", Key: 0, Decision: model.Approve}
	status0  = Input{Action: ActStatus, Run: "r", Key: 0}
	fenceR   = Input{Action: model.ActFence, Run: "r"}
	cancelR  = Input{Action: model.ActCancel, Run: "r"}

	created   = Output{Status: "active", Epoch: 1, Created: true}
	admitted  = Output{Admit: model.AnsAdmit, Epoch: 1}
	duplicate = Output{Admit: model.AnsDuplicate, Epoch: 1}
	unknown   = Output{Unknown: true, Unbounded: true}
	lost      = Output{Unknown: true}
)

// TestExpect pins the mapping of model answers onto wire answers for one action of
// each kind, starting from a fresh run or after a short prefix.
func TestExpect(t *testing.T) {
	keys := KeyNames(2)
	init := model.Init(model.Config{Runs: []string{"r"}, Keys: keys})
	tests := []struct {
		name   string
		prefix []Input
		in     Input
		want   Output
	}{
		{"open new", nil, openR, created},
		{"open again", []Input{openR}, openR, Output{Status: "active", Epoch: 1}},
		{"admit unknown run", nil, admitK0, Output{Err: model.ErrUnknownRun}},
		{"admit", []Input{openR}, admitK0, admitted},
		{"admit again", []Input{openR, admitK0}, admitK0, duplicate},
		{"admit gated", []Input{openR}, gatedK0, Output{Admit: model.AnsHeld, Epoch: 1}},
		{"admit future epoch", []Input{openR}, Input{Action: model.ActAdmit, Run: "r", Epoch: 2}, Output{Err: model.ErrBadEpoch}},
		{"admit stale epoch", []Input{openR, fenceR}, admitK0, Output{Admit: model.AnsDenied, Reason: model.ReasonStaleEpoch, Epoch: 2}},
		{"approve", []Input{openR, gatedK0}, approve0, Output{}},
		{"approve again", []Input{openR, gatedK0, approve0}, approve0, Output{Repeat: true}},
		{"approve not pending", []Input{openR}, approve0, Output{Err: model.ErrNotPending}},
		{"complete", []Input{openR, admitK0}, Input{Action: model.ActComplete, Run: "r", Outcome: model.OK}, Output{}},
		{"complete not admitted", []Input{openR}, Input{Action: model.ActComplete, Run: "r", Outcome: model.OK}, Output{Err: model.ErrNotAdmitted}},
		{"duplicate of completed", []Input{openR, admitK0, {Action: model.ActComplete, Run: "r", Outcome: model.Failed}}, admitK0,
			Output{Admit: model.AnsDuplicate, Outcome: model.Failed, Epoch: 1}},
		{"cancel unknown run", nil, cancelR, Output{Status: "cancelled", Epoch: 2}},
		{"fence final", []Input{cancelR}, fenceR, Output{Err: model.ErrRunFinal}},
		{"fence", []Input{openR}, fenceR, Output{Epoch: 2}},
		{"status unknown run", nil, status0, Output{Err: model.ErrUnknownRun}},
		{"status held gated", []Input{openR, gatedK0}, status0,
			Output{Status: "active", Epoch: 1, Pending: 1, EffStatus: "held", EffEpoch: 1, EffGated: true}},
		{"status released", []Input{openR, gatedK0, approve0}, status0,
			Output{Status: "active", Epoch: 1, EffStatus: "released", EffEpoch: 1, EffGated: true, EffApprv: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := init
			for _, p := range tc.prefix {
				_, s = Expect(s, p)
			}
			if got, _ := Expect(s, tc.in); got != tc.want {
				t.Errorf("Expect(%+v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

// TestCheckSynthetic runs the checker on small hand-made histories whose verdict is
// known, including unknown outcomes and a lost acknowledged write.
func TestCheckSynthetic(t *testing.T) {
	keys := KeyNames(2)
	tests := []struct {
		name string
		ops  []porcupine.Operation
		want Verdict
	}{
		{"sequential", []porcupine.Operation{
			op(0, 0, 1, openR, created), op(0, 2, 3, admitK0, admitted), op(0, 4, 5, admitK0, duplicate),
		}, Linearizable},
		{"two admits of one key", []porcupine.Operation{
			op(0, 0, 1, openR, created), op(0, 2, 5, admitK0, admitted), op(1, 3, 6, admitK0, admitted),
		}, NotLinearizable},
		{"concurrent admits, either first", []porcupine.Operation{
			op(0, 0, 1, openR, created), op(0, 2, 5, admitK0, duplicate), op(1, 3, 6, admitK0, admitted),
		}, Linearizable},
		{"unknown open took effect", []porcupine.Operation{
			op(0, 0, 100, openR, unknown), op(1, 2, 3, admitK0, admitted),
		}, Linearizable},
		{"unknown open did not take effect", []porcupine.Operation{
			op(0, 0, 100, openR, unknown), op(1, 2, 3, admitK0, Output{Err: model.ErrUnknownRun}),
		}, Linearizable},
		{"open lost in a crash did not take effect", []porcupine.Operation{
			op(0, 0, 5, openR, lost), op(1, 10, 11, status0, Output{Err: model.ErrUnknownRun}),
		}, Linearizable},
		{"open lost in a crash took effect", []porcupine.Operation{
			op(0, 0, 5, openR, lost), op(1, 10, 11, admitK0, admitted),
		}, Linearizable},
		{"open lost in a crash took effect after the crash", []porcupine.Operation{
			op(0, 0, 5, openR, lost), op(1, 10, 11, status0, Output{Err: model.ErrUnknownRun}),
			op(1, 12, 13, admitK0, admitted),
		}, NotLinearizable},
		{"acknowledged open lost after a crash", []porcupine.Operation{
			op(0, 0, 1, openR, created), op(1, 10, 11, status0, Output{Err: model.ErrUnknownRun}),
		}, NotLinearizable},
		{"answer in the wrong order", []porcupine.Operation{
			op(0, 0, 1, openR, created), op(0, 2, 3, admitK0, duplicate), op(1, 4, 5, admitK0, admitted),
		}, NotLinearizable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got, _ := Check(keys, tc.ops, 10*time.Second); got != tc.want {
				t.Errorf("Check = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestShrink checks that shrinking keeps a failing history failing, drops the runs
// and the read-only operations that do not matter, and writes a visualization.
func TestShrink(t *testing.T) {
	keys := KeyNames(2)
	other := func(in Input) Input { in.Run = "other"; return in }
	ops := []porcupine.Operation{
		op(0, 0, 1, openR, created),
		op(1, 0, 1, other(openR), created),
		op(1, 2, 3, other(admitK0), admitted),
		op(0, 2, 3, status0, Output{Status: "active", Epoch: 1, EffStatus: "absent"}),
		op(0, 4, 7, admitK0, admitted),
		op(2, 5, 8, admitK0, admitted), // the second admit of one key
		op(0, 9, 10, status0, Output{Status: "active", Epoch: 1, EffStatus: "admitted"}),
		op(1, 11, 12, other(status0), Output{Status: "active", Epoch: 1, EffStatus: "admitted"}),
	}
	if v, _ := Check(keys, ops, 0); v != NotLinearizable {
		t.Fatalf("the history should not be linearizable: %v", v)
	}
	small := Shrink(keys, ops, 0)
	if v, _ := Check(keys, small, 0); v != NotLinearizable {
		t.Fatalf("the shrunk history is linearizable: %v", v)
	}
	if len(small) != 3 {
		var b strings.Builder
		WriteHistory(&b, keys, small)
		t.Errorf("shrunk to %d operations, want 3 (open and the two admits):\n%s", len(small), b.String())
	}
	p, err := Report(t.TempDir(), 1, keys, ops, small, 0)
	if err != nil {
		t.Fatal(err)
	}
	if p == "" {
		t.Error("no report path")
	}
}
