package server

import (
	"crypto/sha256"
	"fmt"
	"sync"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
)

// usage is what each token holds of what all tokens share: the runs it opened
// (core.Limits.RunsMax is for all) and the bytes of results it recorded, until those
// runs retire (node.OnRetire tells it). Limits.RunsPerTokenMax and
// Limits.ResultBytesPerTokenMax bound them; going over is the refusal quota.
//
// Counted in memory from the gate's start: the log does not record which token did
// what, so after a restart what was recorded before counts against no token.
//
// Lock order: the node calls retired under its lock, so usage.mu is taken after the
// node's and the server never calls the node while it holds usage.mu.
type usage struct {
	mu      sync.Mutex
	runs    map[tokenHash]int   // runs opened, not retired, by token
	results map[tokenHash]int64 // result bytes recorded in runs not retired, by token
	byRun   map[core.RunID]*runUsage
}

// tokenHash is a token as the server keeps it (Credential.hash): the same token is
// the same quota across reloads of the roles file.
type tokenHash = [sha256.Size]byte

// runUsage is what one run holds of the tokens' quotas: who opened it and the result
// bytes each token recorded in it. It is kept while the run holds something or a
// request of it is between its reserve and its settle (inFlight).
type runUsage struct {
	opened   bool // opener's runs count it
	opener   tokenHash
	results  map[tokenHash]int64
	inFlight int  // opens and completes of the run reserved and not settled yet
	retired  bool // the run retired while some were in flight: they keep nothing
}

func newUsage() *usage {
	return &usage{runs: map[tokenHash]int{}, results: map[tokenHash]int64{}, byRun: map[core.RunID]*runUsage{}}
}

// usageCounts reports whether usage counts c: an open, or a complete with a result.
func usageCounts(c *core.Command) bool {
	return c.Op == core.OpOpen || c.Op == core.OpComplete && c.Result != ""
}

// reserve counts what c takes of cred's quotas before the node applies it, or
// refuses it (quota) and counts nothing: an open takes one run, a complete with a
// result its bytes. A reserve of a command usageCounts that returns nil is followed
// by settle.
func (u *usage) reserve(cred *Credential, c *core.Command, l Limits) error {
	switch {
	case c.Op == core.OpOpen:
		return u.reserveRun(cred, c.Run, l.RunsPerTokenMax)
	case c.Op == core.OpComplete && c.Result != "":
		return u.reserveResult(cred, c.Run, int64(len(c.Result)), int64(l.ResultBytesPerTokenMax))
	}
	return nil
}

// recordsNothing reports whether c, an open or a complete that its token's quota
// refuses, cannot record anything: an open of a run the gate knows or retired, a
// complete that repeats the outcome and result its effect has, or of a retired run.
// Such a request goes on uncounted, so that the retry of one whose answer was lost
// gets its answer, not quota. What it reads stays true until c is applied: a known
// run is never unknown again, a completed effect never changes, a retirement is for
// good. It asks the node: the caller holds no lock of usage.
func (s *Server) recordsNothing(c *core.Command) bool {
	st := core.Command{Op: core.OpStatus, Run: c.Run}
	if c.Op == core.OpComplete {
		st.Key = c.Key
	}
	a := s.node.Apply(node.Request{Cmd: st})
	if a.Err != nil {
		return false
	}
	e := a.Reply.Effect
	return c.Op == core.OpOpen || a.Reply.Run.Status == core.RunRetired ||
		e.Status == core.EffectCompleted && e.Outcome == c.Outcome && e.Result == c.Result
}

// settle keeps what reserve counted for c if the node's answer a says c recorded it
// (an open that created its run; a complete that recorded its result, not a
// repeat), and gives it back otherwise.
func (u *usage) settle(cred *Credential, c *core.Command, a node.Answer) {
	switch {
	case c.Op == core.OpOpen:
		u.openDone(cred, c.Run, a.Err == nil && a.Reply.Open.Created)
	case c.Op == core.OpComplete && c.Result != "":
		u.completeDone(cred, c.Run, int64(len(c.Result)), a.Err == nil && !a.Reply.Complete.Repeat)
	}
}

func (u *usage) reserveRun(cred *Credential, run core.RunID, max int) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if n := u.runs[cred.hash]; n >= max && !weakened.quota {
		return fmt.Errorf("%w: token %q has opened %d runs that are not retired yet, its most (runs per token)", proto.ErrQuota, cred.Name, n)
	}
	u.runs[cred.hash]++
	u.runLocked(run).inFlight++
	return nil
}

func (u *usage) reserveResult(cred *Credential, run core.RunID, n, max int64) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if held := u.results[cred.hash]; held+n > max && !weakened.quota {
		return fmt.Errorf("%w: token %q holds %d bytes of results in runs not retired yet; %d more would pass its most, %d (result bytes per token)", proto.ErrQuota, cred.Name, held, n, max)
	}
	u.results[cred.hash] += n
	u.runLocked(run).inFlight++
	return nil
}

func (u *usage) openDone(cred *Credential, run core.RunID, created bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ru := u.inFlightLocked(run)
	if created && !ru.retired {
		ru.opened, ru.opener = true, cred.hash
	} else {
		u.dropRunLocked(cred.hash)
	}
	u.tidyLocked(run, ru)
}

func (u *usage) completeDone(cred *Credential, run core.RunID, n int64, recorded bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ru := u.inFlightLocked(run)
	if recorded && !ru.retired {
		if ru.results == nil {
			ru.results = map[tokenHash]int64{}
		}
		ru.results[cred.hash] += n
	} else {
		u.dropResultsLocked(cred.hash, n)
	}
	u.tidyLocked(run, ru)
}

// retired gives back what run held. The node calls it (OnRetire), under its lock,
// for each run it retires; a request of run in flight then keeps nothing either.
func (u *usage) retired(run core.RunID) {
	u.mu.Lock()
	defer u.mu.Unlock()
	ru := u.byRun[run]
	if ru == nil {
		return
	}
	if ru.opened {
		u.dropRunLocked(ru.opener)
		ru.opened = false
	}
	for h, n := range ru.results {
		u.dropResultsLocked(h, n)
	}
	ru.results = nil
	ru.retired = true
	u.tidyLocked(run, ru)
}

func (u *usage) runLocked(run core.RunID) *runUsage {
	ru := u.byRun[run]
	if ru == nil {
		ru = &runUsage{}
		u.byRun[run] = ru
	}
	return ru
}

// inFlightLocked is run's entry as a settle finds it, one request fewer in flight.
func (u *usage) inFlightLocked(run core.RunID) *runUsage {
	ru := u.byRun[run]
	if ru == nil || ru.inFlight <= 0 {
		panic(fmt.Sprintf("soundgate/server: a settle of run %q that no reserve counted", run))
	}
	ru.inFlight--
	return ru
}

// tidyLocked forgets run's entry once it holds nothing and nothing of it is in flight.
func (u *usage) tidyLocked(run core.RunID, ru *runUsage) {
	if ru.inFlight == 0 && !ru.opened && len(ru.results) == 0 {
		delete(u.byRun, run)
	}
}

func (u *usage) dropRunLocked(h tokenHash) {
	if u.runs[h]--; u.runs[h] <= 0 {
		delete(u.runs, h)
	}
}

func (u *usage) dropResultsLocked(h tokenHash, n int64) {
	if u.results[h] -= n; u.results[h] <= 0 {
		delete(u.results, h)
	}
}
