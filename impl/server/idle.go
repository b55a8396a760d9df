package server

import (
	"time"

	"github.com/soundgate/soundgate/impl/proto"
)

// The idle rule, written once for both transports: an agent's connection that is
// idle for Limits.IdleTimeout is closed, so that agents that went away without
// closing cannot keep their share of the connections. Idle means no admit of it
// waits at the node (a parked wait is not idle), no answer of it is queued or being
// written, and nothing was read from it or written to it for IdleTimeout. The
// transport that reads the session asks the rule (idleCheck) when the deadline it
// was given passes, and stops reading a connection it finds expired.

// refusalIdle is the refusal kind of a connection closed for idleness.
const refusalIdle = "idle"

// touch records that bytes were read from the session's connection, or answers
// were written to it, at now: the idle rule counts from the latest.
func (ss *session) touch(now time.Time) { ss.active.Store(now.UnixNano()) }

// idleCheck applies the idle rule to ss at now; call it on the goroutine that reads
// ss. expired: ss is an agent's idle connection and must be closed (the caller
// counts it with idleClosed). Otherwise next is when to look again: zero if the rule
// does not apply to ss (no hello yet, not an agent, or the adversary_weak_idle
// build), now+IdleTimeout while ss is busy, else when it would expire.
//
// The order of the reads matters: a waiting admit's Done touches the session and
// queues its answer before it stops counting as waiting, and the goroutine transport
// marks itself sending before it takes the answers from the outbox and touches the
// session before it clears the mark, so that an answer in any of these hands is
// seen as busy or as recent activity.
func (ss *session) idleCheck(now time.Time) (expired bool, next time.Time) {
	// Approvers and operators are never closed for idleness: they are the capacity
	// reserved to keep decide and cancel in reach, and an idle one waits for a human.
	if ss.cred == nil || ss.cred.Role != proto.RoleAgent || weakened.idle {
		return false, time.Time{}
	}
	idle := ss.s.cfg.Limits.IdleTimeout
	if ss.waiting.Load() > 0 || ss.queued() > 0 || (ss.sending != nil && ss.sending()) {
		return false, now.Add(idle)
	}
	if by := time.Unix(0, ss.active.Load()).Add(idle); now.Before(by) {
		return false, by
	}
	return true, time.Time{}
}

// idleClosed counts ss, which idleCheck found expired, as refused for idleness.
func (ss *session) idleClosed() {
	ss.s.refused.add(ss.s.log, refusalIdle, "remote", ss.remote, "token_name", ss.cred.Name,
		"idle_timeout", ss.s.cfg.Limits.IdleTimeout.String())
}
