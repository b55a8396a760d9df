// Package waltrace holds the write-ahead log's crash simulator (impl/wal/crashsim)
// to its spec, spec/tla/WAL.tla: it replays the abstract trace of every simulated
// life (crashsim.Event) through tlacheck's Stepper and fails on the first step the
// spec does not allow.
//
// Each event is the spec's action of the same name with the same LSN: Append with
// its payload's digest, Write, Sync, Ack, Snapshot, SyncDir, Crash. A crash is
// nondeterministic (what the page cache kept, whether a snapshot's entry survived),
// so the checker keeps every spec state the trace may have reached; a Recover keeps
// those whose recovery is the one the log gave (the snapshot's LSN, each replayed
// record's LSN and payload digest). In each state after a recovery, the spec's own
// NoLoss, NoInvention, AckedDurable and RefusesOnlyDamage must hold. Then LSNs are
// counted again from the snapshot (WAL.tla's Renumber), so that states stay small
// over thousands of lives.
//
// Payload digests are mapped onto DataValues payload values of the spec: two
// different payloads may share one (the crash simulator compares the bytes itself).
package waltrace

import (
	"fmt"
	"os"
	"strings"

	"github.com/soundgate/soundgate/impl/wal"
	"github.com/soundgate/soundgate/impl/wal/crashsim"
	"github.com/soundgate/soundgate/tlacheck"
)

// DataValues is how many payload values the spec's Data holds in a check.
const DataValues = 16

// lsnMax and crashesMax bound Append and Crash in the spec's constants: no trace
// reaches them (LSNs are counted from the snapshot).
const (
	lsnMax     = 1 << 40
	crashesMax = 1 << 40
)

// invariants are the spec's properties checked after every recovery.
var invariants = []string{"NoLoss", "NoInvention", "AckedDurable", "RefusesOnlyDamage"}

// historyMax is how many events before a mismatch its report shows.
const historyMax = 12

// Stats are a check's figures.
type Stats struct {
	Traces     int // traces checked: one per life, and the last recovery's
	Steps      int // events replayed (each a step of the spec)
	Recoveries int // recoveries matched, the spec's invariants checked after each
	Crashes    int
	Snapshots  int
	MaxStates  int // most spec states a trace could have reached at once
}

// Summary is the one-line report of a check.
func (s Stats) Summary(spec string) string {
	return fmt.Sprintf("traces replayed through %s: %d (each life, then the last recovery), %d steps, %d crashes, %d snapshots, %d recoveries matched, %s holding after each, at most %d spec states at once, mismatches 0",
		spec, s.Traces, s.Steps, s.Crashes, s.Snapshots, s.Recoveries, strings.Join(invariants, ", "), s.MaxStates)
}

// Checker replays traces against the spec; Check takes them in order, life after life.
// Not safe for concurrent use.
type Checker struct {
	st      *tlacheck.Stepper
	data    []tlacheck.Value
	states  []tlacheck.State
	base    wal.LSN // the LSN the spec's states count from (the last recovery's snapshot)
	started bool
	history []string // the latest events, for a mismatch report
	stats   Stats
}

// New loads the spec at specPath with constants for traces: DataValues payloads,
// Append and Crash unbounded in practice.
func New(specPath string) (*Checker, error) {
	names := make([]string, DataValues)
	data := make([]tlacheck.Value, DataValues)
	for i := range names {
		names[i] = fmt.Sprintf("d%d", i)
		data[i] = tlacheck.ModelValue(names[i])
	}
	cfg := fmt.Sprintf("CONSTANTS\n  Data = {%s}\n  MaxLSN = %d\n  MaxCrashes = %d\nINIT Init\nNEXT Next\n",
		strings.Join(names, ", "), int64(lsnMax), int64(crashesMax))
	src, err := os.ReadFile(specPath)
	if err != nil {
		return nil, fmt.Errorf("waltrace: %w", err)
	}
	spec, err := tlacheck.LoadSource(string(src), cfg)
	if err != nil {
		return nil, fmt.Errorf("waltrace: %s: %w", specPath, err)
	}
	return &Checker{st: spec.Stepper(), data: data}, nil
}

// Stats returns the figures so far.
func (c *Checker) Stats() Stats { return c.stats }

// Check replays one life's trace (a crashsim Config.Trace): it must begin with a
// recovery, and only the last trace of a run may end without a crash.
func (c *Checker) Check(events []crashsim.Event) error {
	if len(events) == 0 || events[0].Action != crashsim.Recover {
		return fmt.Errorf("waltrace: a trace begins with a recovery")
	}
	c.stats.Traces++
	for i, e := range events {
		if err := c.step(e); err != nil {
			return fmt.Errorf("waltrace: life %d, step %d, %s: %v\n  latest steps: %s", c.stats.Traces, i+1, e, err, strings.Join(c.history, ", "))
		}
		c.history = append(c.history, e.String())
		if len(c.history) > historyMax {
			c.history = c.history[1:]
		}
		c.stats.Steps++
		c.stats.MaxStates = max(c.stats.MaxStates, len(c.states))
	}
	return nil
}

func (c *Checker) step(e crashsim.Event) error {
	if e.Action == crashsim.Recover {
		return c.recover(e.Replay)
	}
	var args []tlacheck.Value
	switch e.Action {
	case crashsim.Append, crashsim.Write, crashsim.Ack, crashsim.Snapshot:
		if e.LSN <= c.base {
			return fmt.Errorf("LSN %d is not after the snapshot at %d", e.LSN, c.base)
		}
		if e.Action == crashsim.Append {
			args = []tlacheck.Value{c.data[e.Payload%DataValues]}
		} else {
			args = []tlacheck.Value{tlacheck.Int(int64(e.LSN - c.base))}
		}
	case crashsim.Sync, crashsim.SyncDir:
	case crashsim.Crash:
		c.stats.Crashes++
	default:
		return fmt.Errorf("no such step of the spec")
	}
	if e.Action == crashsim.Snapshot {
		c.stats.Snapshots++
	}
	next, err := c.each(func(s tlacheck.State) ([]tlacheck.State, error) {
		return c.st.Step(s, string(e.Action), args...)
	})
	if err != nil {
		return err
	}
	if e.Action == crashsim.Append {
		// The log numbered the record as the spec does.
		for _, s := range next {
			if last, _ := c.st.Var(s, "last"); last.AsInt() != int64(e.LSN-c.base) {
				return fmt.Errorf("the spec appends at LSN %d", int64(c.base)+last.AsInt())
			}
		}
	}
	if len(next) == 0 {
		return fmt.Errorf("the spec does not allow it from %s", c.describe())
	}
	c.states = next
	return nil
}

// recover matches a recovery: from the crash's states (or, for the first, the
// initial state) it keeps those whose recovery is r, checks the spec's invariants in
// each, and counts LSNs from the snapshot again.
func (c *Checker) recover(r *crashsim.Replay) error {
	if r == nil {
		return fmt.Errorf("a recovery without its replay")
	}
	var from []tlacheck.State
	var err error
	if !c.started {
		c.started = true
		if from, err = c.st.Init(); err != nil {
			return err
		}
	} else if from, err = c.each(func(s tlacheck.State) ([]tlacheck.State, error) {
		return c.st.Step(s, "Recover")
	}); err != nil {
		return err
	}
	var kept []tlacheck.State
	for _, s := range from {
		if c.recovered(s, r) {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return fmt.Errorf("the spec's recoveries from %s are %s", c.describe(), c.recoveries(from))
	}
	for _, s := range kept {
		for _, inv := range invariants {
			v, err := c.st.Eval(s, inv)
			if err != nil {
				return err
			}
			if !v.AsBool() {
				return fmt.Errorf("%s is violated in the spec's state %s", inv, clip(c.st.Record(s).String()))
			}
		}
	}
	c.stats.Recoveries++
	c.states = kept
	// Every kept state has r's snapshot: count from it.
	next, err := c.each(func(s tlacheck.State) ([]tlacheck.State, error) {
		return c.st.Step(s, "Renumber")
	})
	if err != nil {
		return err
	}
	if len(next) == 0 {
		return fmt.Errorf("Renumber is not enabled in %s", c.describe())
	}
	c.states, c.base = next, r.Snapshot
	return nil
}

// recovered reports whether s is up with r as its last recovery.
func (c *Checker) recovered(s tlacheck.State, r *crashsim.Replay) bool {
	if p, _ := c.st.Var(s, "phase"); p.AsString() != "up" {
		return false
	}
	rec, _ := c.st.Var(s, "recovery")
	snap, _ := rec.Field("snap")
	recs, _ := rec.Field("recs")
	if r.Snapshot < c.base || snap.AsInt() != int64(r.Snapshot-c.base) || len(recs.Domain()) != len(r.Records) {
		return false
	}
	for _, x := range r.Records {
		if x.LSN <= c.base {
			return false
		}
		v, ok := recs.Apply(tlacheck.Int(int64(x.LSN - c.base)))
		if !ok || !tlacheck.Equal(v, c.data[x.Payload%DataValues]) {
			return false
		}
	}
	return true
}

// each applies f to every state and returns the successors, each once.
func (c *Checker) each(f func(tlacheck.State) ([]tlacheck.State, error)) ([]tlacheck.State, error) {
	var all []tlacheck.State
	for _, s := range c.states {
		next, err := f(s)
		if err != nil {
			return nil, err
		}
		all = append(all, next...)
	}
	if len(all) <= 1 {
		return all, nil
	}
	var out []tlacheck.State
	seen := map[string]bool{}
	for _, n := range all {
		if k := c.st.Record(n).String(); !seen[k] {
			seen[k] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// describe prints the states the trace may be in, LSNs counted from c.base.
func (c *Checker) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d state(s), LSNs counted from %d:", len(c.states), c.base)
	for i, s := range c.states {
		if i == 3 {
			fmt.Fprintf(&b, " ...")
			break
		}
		fmt.Fprintf(&b, " %s", clip(c.st.Record(s).String()))
	}
	return b.String()
}

// clip shortens a state for a report: its sequences can hold hundreds of records.
func clip(s string) string {
	const n = 600
	if len(s) <= n {
		return s
	}
	return s[:n] + " ..."
}

func (c *Checker) recoveries(states []tlacheck.State) string {
	var out []string
	for i, s := range states {
		if i == 3 {
			out = append(out, "...")
			break
		}
		rec, _ := c.st.Var(s, "recovery")
		p, _ := c.st.Var(s, "phase")
		out = append(out, clip(fmt.Sprintf("%s %s", p, rec)))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, "; ")
}
