package smt

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// BrokenCase says which obligation a deliberately broken variant of the spec
// (spec/tla/broken/NAME.tla, one defect each) must make satisfiable: the step of
// the mutated action into the property it breaks when one step from an IndInv
// state reaches the violation, otherwise into the conjunct of IndInv that protects
// the property (the violation itself needs more steps, which IndInv cuts short).
type BrokenCase struct {
	Variant    string // file name without .tla
	Action     string
	Conclusion string
	Why        string
}

// BrokenCases is the mapping, one line per variant of SoundGate.tla (Variants); a
// variant of the folder missing here is a failure, not a skip.
var BrokenCases = []BrokenCase{
	{"BrokenP1ReleasedAdmitWhilePending", "Admit", "P1", "a released key is admitted while another approval is pending: the admit's context has pending # {}"},
	{"BrokenP2RejectSparesSiblings", "Decide", "HistoryShape", "a reject dooms its held siblings without rejecting them: doomed # the rejected keys, which is what keeps P2 (a later admit of a sibling) from happening"},
	{"BrokenP3AdmitAdmittedAgain", "Admit", "P3", "an admitted key is admitted again: admits reaches 2"},
	{"BrokenP3ReopenRetired", "Open", "HistoryShape", "a retired id is opened again with its admitted keys absent but admits = 1: HistoryShape is what stops the second admit (P3)"},
	{"BrokenP4AdmitAfterCancel", "Admit", "P4", "a cancelled run admits: the admit's context has status cancelled"},
	{"BrokenP4AdmitStaleEpoch", "Admit", "P4", "an admit at a stale epoch: the admit's context has current = FALSE"},
	{"BrokenStructureFenceKeepsPending", "Fence", "PendingExact", "Fence drops the held effects but keeps pending: pending # the undecided gated held keys"},
}

// copyOfRE finds the spec a broken variant copies, which its header names:
// "DELIBERATELY BROKEN copy of SoundGate.tla".
var copyOfRE = regexp.MustCompile(`DELIBERATELY BROKEN copy of ([A-Za-z0-9_]+\.tla)`)

// Variants returns the broken variants in dir of the spec at specPath: the .tla
// files whose header says they copy it (the folder holds variants of other specs
// too, such as WAL.tla's). A .tla file that names no spec it copies is an error.
func Variants(dir, specPath string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.tla"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		m := copyOfRE.FindSubmatch(src)
		if m == nil {
			return nil, fmt.Errorf("%s does not say which spec it is a broken copy of (\"DELIBERATELY BROKEN copy of NAME.tla\" in its header)", f)
		}
		if string(m[1]) == filepath.Base(specPath) {
			out = append(out, f)
		}
	}
	return out, nil
}
