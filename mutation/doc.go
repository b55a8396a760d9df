// Package mutation measures how much of a package's behaviour its tests pin down: it
// makes small, type-checked changes (mutants) to the source, runs the tests against
// each one, and reports which mutants the tests kill.
//
// The pipeline has four stages:
//
//	Generate   go/packages loads the target packages with types; every operator
//	           (operators.go) proposes edits on the syntax tree; each edit is applied
//	           in memory and the whole package (with its in-package tests) is type
//	           checked again, so a mutant that cannot compile is dropped before it is
//	           ever run (Stats.Discarded counts them per operator).
//	Filter     --diff BASE keeps the mutants on lines a git change touched; the
//	           suppression file (suppress.go) removes reviewed equivalent mutants.
//	Run        every mutant is tested through `go test -overlay`: the mutated file is
//	           written to a temporary directory and substituted by the go command, so
//	           the working tree is never written to, not even by an interrupted run.
//	           Mutants that can be wrapped share one schema test binary (schema.go)
//	           and survivors are confirmed by their own build.
//	           Workers run in parallel; the test binary gets a timeout derived from the
//	           measured run time of the unmutated test binary (never the build), with
//	           a floor; a mutant that times out is run a second time before it counts.
//	Classify   killed (by which test), survived, timed out, not viable (with the
//	           compiler's message), equivalent (a survivor whose compiled object code is
//	           identical to the original's) or suppressed.
//
// The score is killed / (killed + survived + timed out): timeouts stay in the
// denominator and are not counted as kills, and mutants that do not compile or are
// equivalent are left out instead of inflating the score.
//
// Mutant ids are stable: file (relative to the module), enclosing function, operator
// and a hash of the local source context (the enclosing statement, the original and
// the replacement text), so an edit elsewhere in the file does not rename a mutant
// and a suppression stays attached to the code it was written for.
package mutation
