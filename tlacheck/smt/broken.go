package smt

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

// BrokenCases is the mapping, one line per variant; a variant of the folder missing
// here is a failure, not a skip.
var BrokenCases = []BrokenCase{
	{"BrokenP1ReleasedAdmitWhilePending", "Admit", "P1", "a released key is admitted while another approval is pending: the admit's context has pending # {}"},
	{"BrokenP2RejectSparesSiblings", "Decide", "HistoryShape", "a reject dooms its held siblings without rejecting them: doomed # the rejected keys, which is what keeps P2 (a later admit of a sibling) from happening"},
	{"BrokenP3AdmitAdmittedAgain", "Admit", "P3", "an admitted key is admitted again: admits reaches 2"},
	{"BrokenP3ReopenRetired", "Open", "HistoryShape", "a retired id is opened again with its admitted keys absent but admits = 1: HistoryShape is what stops the second admit (P3)"},
	{"BrokenP4AdmitAfterCancel", "Admit", "P4", "a cancelled run admits: the admit's context has status cancelled"},
	{"BrokenP4AdmitStaleEpoch", "Admit", "P4", "an admit at a stale epoch: the admit's context has current = FALSE"},
	{"BrokenStructureFenceKeepsPending", "Fence", "PendingExact", "Fence drops the held effects but keeps pending: pending # the undecided gated held keys"},
}
