package core

import (
	"errors"
	"fmt"
	"math"
)

// Limits bound everything the core stores, so that no caller can grow the gate without
// bound. Each limit, when reached, is a typed error that changes nothing.
type Limits struct {
	RunsMax          int // runs known to the gate, tombstones included, retired ones not
	RetiredMax       int // retired runs (each costs its id's bytes and 4 more)
	KeysPerRunMax    int // effects of one run that are not absent
	PendingPerRunMax int // open approvals of one run
	RunBytesMax      int // bytes of a run id
	KeyBytesMax      int // bytes of an idempotency key
	ResultBytesMax   int // bytes of a completed effect's result
	// StateBytesMax is the memory budget of the state: the bytes StateBytes counts
	// for every run and effect the gate holds (not the retired ids: RetiredMax).
	StateBytesMax int64
}

// DefaultLimits are the limits of `soundgate serve` unless flags change them.
func DefaultLimits() Limits {
	return Limits{
		RunsMax:          1 << 20,
		RetiredMax:       1 << 26,
		KeysPerRunMax:    1 << 16,
		PendingPerRunMax: 1 << 10,
		RunBytesMax:      128,
		KeyBytesMax:      256,
		ResultBytesMax:   16 << 10,
		StateBytesMax:    1 << 30,
	}
}

// Unbounded are limits nothing reaches: a log's records were each accepted under the
// limits of their time, so a replay must not refuse one because the limits are lower now
// (node.Recover replays under these, then sets the configured ones with SetLimits).
func Unbounded() Limits {
	const most = math.MaxInt
	return Limits{RunsMax: most, RetiredMax: most, KeysPerRunMax: most, PendingPerRunMax: most,
		RunBytesMax: most, KeyBytesMax: most, ResultBytesMax: most, StateBytesMax: math.MaxInt64}
}

// ErrOverLimits reports limits that the state already exceeds (SetLimits).
var ErrOverLimits = errors.New("soundgate/core: the state exceeds the limits")

// SetLimits gives g the limits l, which then bound every change. It refuses, and
// changes nothing, when the state already holds more than a count l allows (runs,
// retired runs, state bytes, a run's effects or open approvals): the gate would break
// its invariants. Lower byte limits of ids, keys and results apply to what comes next
// only: what the state holds was accepted under the limits of its time.
func (g *Gate) SetLimits(l Limits) error {
	over := func(what string, have, limit int64) error {
		return fmt.Errorf("%w: %d %s, over the limit of %d", ErrOverLimits, have, what, limit)
	}
	switch {
	case len(g.runs) > l.RunsMax:
		return over("runs", int64(len(g.runs)), int64(l.RunsMax))
	case g.retired.len() > l.RetiredMax:
		return over("retired runs", int64(g.retired.len()), int64(l.RetiredMax))
	case g.bytes > l.StateBytesMax:
		return over("state bytes", g.bytes, l.StateBytesMax)
	}
	for _, run := range g.order {
		if g.runs[run.ID] != run {
			continue // retired during a cut
		}
		if len(run.effects) > l.KeysPerRunMax {
			return over(fmt.Sprintf("effects in run %q", run.ID), int64(len(run.effects)), int64(l.KeysPerRunMax))
		}
		if len(run.pending) > l.PendingPerRunMax {
			return over(fmt.Sprintf("open approvals in run %q", run.ID), int64(len(run.pending)), int64(l.PendingPerRunMax))
		}
	}
	g.limits = l
	return nil
}
