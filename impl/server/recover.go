package server

import (
	"errors"
	"fmt"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/wal"
)

// ErrReplay reports a log whose records do not replay into a consistent gate: a record
// that does not decode, or a command that changes nothing although it was logged
// because it changed the state. The gate refuses to start (fail closed).
var ErrReplay = errors.New("soundgate/server: log does not replay")

// Recover rebuilds the gate from a log: the snapshot first, then every record after
// it, in order. It returns the gate and the position of the last record applied.
func Recover(log *wal.Log, limits core.Limits) (*core.Gate, wal.LSN, error) {
	g := core.New(limits)
	var last wal.LSN
	err := log.Replay(func(upto wal.LSN, state []byte) error {
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
		if rep := g.Step(c); rep.Err != nil || !rep.Persist {
			return fmt.Errorf("%w: record %d (%s %s) did not change the state on replay (err %v)", ErrReplay, lsn, c.Op, c.Run, rep.Err)
		}
		last = lsn
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return g, last, nil
}
