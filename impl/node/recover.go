package node

import (
	"errors"
	"fmt"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// ErrReplay reports a log whose records do not replay into a consistent gate: a
// record that does not decode, a command that changes nothing although it was logged
// because it changed the state, or a state that breaks the core's invariants. The
// gate refuses to start (fail closed).
var ErrReplay = errors.New("soundgate/node: log does not replay")

// Recover rebuilds the gate from l, the snapshot first and then every record after
// it, in order, and returns a node over it. Limits lowered since the records were
// written do not refuse them; a state that holds more than cfg's limits allow is
// refused (core.ErrOverLimits). The node appends to cfg.Log, or to l when
// cfg.Log is nil.
func Recover(l *wal.Log, cfg Config) (*Node, error) {
	if cfg.Log == nil {
		cfg.Log = l
	}
	g := core.New(core.Unbounded()) // each record passed the limits of its time
	last, err := replay(l, g, cfg.Audit)
	if err != nil {
		return nil, err
	}
	if err := g.CheckInvariants(); err != nil {
		return nil, fmt.Errorf("%w: the state at record %d: %v", ErrReplay, last, err)
	}
	if err := g.SetLimits(limitsOf(cfg)); err != nil {
		return nil, fmt.Errorf("%w: raise the limit, or start under the old one and let runs retire first", err)
	}
	traceRecovered(cfg, g, last)
	return newNode(cfg, g, last), nil
}

// replay applies l's snapshot and records to g, telling audit (if any) of each
// record's change, and returns the position of the last record applied.
func replay(l *wal.Log, g *core.Gate, audit Audit) (wal.LSN, error) {
	var last wal.LSN
	err := l.Replay(func(upto wal.LSN, state []byte) error {
		if err := g.UnmarshalBinary(state); err != nil {
			return fmt.Errorf("%w: snapshot at %d: %v", ErrReplay, upto, err)
		}
		last = upto
		return nil
	}, func(lsn wal.LSN, rec []byte) error {
		c, err := core.DecodeCommand(rec)
		if err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrReplay, lsn, err)
		}
		var before []core.Approval
		var pending int
		if audit != nil {
			before, pending = listBefore(g, c)
		}
		rep, err := replayStep(g, c)
		if err != nil {
			return fmt.Errorf("%w: record %d %v", ErrReplay, lsn, err)
		}
		if audit != nil {
			audit.Record(changeOf(g, lsn, c, rep, before, pending), true)
		}
		last = lsn
		return nil
	})
	return last, err
}

// replayStep applies one logged command: it must change the state, as it did when
// it was logged.
func replayStep(g *core.Gate, c core.Command) (core.Reply, error) {
	rep := g.Step(c)
	if rep.Err != nil || !rep.Persist {
		return rep, fmt.Errorf("(%s %s) did not change the state on replay (err %v)", c.Op, c.Run, rep.Err)
	}
	return rep, nil
}

// Restore returns a node over the state a snapshot encoded (core.Gate.MarshalBinary, or a core.Cut),
// with no log behind it: for tools and tests that start from a given state.
func Restore(cfg Config, state []byte) (*Node, error) {
	if cfg.Log != nil {
		return nil, fmt.Errorf("soundgate/node: Restore keeps no log (the log would not hold the state)")
	}
	g := core.New(limitsOf(cfg))
	if err := g.UnmarshalBinary(state); err != nil {
		return nil, err
	}
	return newNode(cfg, g, 0), nil
}
