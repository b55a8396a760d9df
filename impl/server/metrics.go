package server

import (
	"runtime"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/metrics"
	"github.com/soundgate/soundgate/impl/proto"
)

// What /metrics reports (docs/operations.md has the table). The server counts only
// what it alone sees, the answers it sends, with an atomic add each; everything
// else is read where it lives when a scrape asks: the node's approvals and waiting
// admits, the log's histograms (impl/wal), the refusals, the connections. The core
// counts nothing.

// admitKind numbers an admit's answer for serverMetrics.admits: 0 is no admit
// answer (another method's, or an error), then admit, held, duplicate, and denied
// once per reason.
type admitKind uint8

const (
	admitNone admitKind = iota
	admitAdmit
	admitHeld
	admitDuplicate
	admitDenied                                               // + core.Reason - 1
	admitKinds  = admitDenied + admitKind(core.ReasonRetired) // one past the last
)

// admitKindOf is the kind of an admit's result.
func admitKindOf(r core.AdmitResult) admitKind {
	switch r.Answer {
	case core.AnswerAdmit:
		return admitAdmit
	case core.AnswerHeld:
		return admitHeld
	case core.AnswerDuplicate:
		return admitDuplicate
	case core.AnswerDenied:
		if r.Reason >= core.ReasonCancelled && r.Reason <= core.ReasonRetired {
			return admitDenied + admitKind(r.Reason) - 1
		}
	}
	return admitNone
}

// labels are the kind's labels on soundgate_admits_total: answer, and for a denial
// its reason.
func (k admitKind) labels() []metrics.Label {
	switch {
	case k == admitAdmit:
		return []metrics.Label{{Name: "answer", Value: core.AnswerAdmit.String()}}
	case k == admitHeld:
		return []metrics.Label{{Name: "answer", Value: core.AnswerHeld.String()}}
	case k == admitDuplicate:
		return []metrics.Label{{Name: "answer", Value: core.AnswerDuplicate.String()}}
	}
	return []metrics.Label{{Name: "answer", Value: core.AnswerDenied.String()},
		{Name: "reason", Value: core.Reason(k - admitDenied + 1).String()}}
}

// serverMetrics are the server's own counters (Config.Metrics).
type serverMetrics struct {
	admits [admitKinds]metrics.Counter // by admitKind; [admitNone] unused
}

// countSent counts an answer that release sends as it was encoded.
func (m *serverMetrics) countSent(a *answer) {
	if m != nil && a.admit != admitNone {
		m.admits[a.admit].Inc()
	}
}

// refusalKinds are the refusals /metrics always reports, 0 until one happens (a
// kind not listed appears once counted).
var refusalKinds = []string{proto.ErrOverloaded.Type, proto.ErrShuttingDown.Type, proto.ErrUnauthenticated.Type,
	proto.ErrForbidden.Type, proto.ErrQuota.Type, refusalIdle}

// roleNone is the role label of connections that have not said hello.
const roleNone = "none"

// writeMetrics writes every family of the server, its node and its log.
func (s *Server) writeMetrics(w *metrics.Writer) {
	w.Family("soundgate_build_info", metrics.TypeGauge, "Always 1: the version of the gate and of the Go toolchain that built it.")
	w.Sample("soundgate_build_info", 1, metrics.Label{Name: "version", Value: s.cfg.Version},
		metrics.Label{Name: "goversion", Value: runtime.Version()})

	w.Family("soundgate_admits_total", metrics.TypeCounter, "Admit answers sent, by answer (admit, held, duplicate, denied) and, for denied, reason. A held admit that waits is counted once, with the answer it is sent in the end; refused admits (an error) are not counted here.")
	for k := admitAdmit; k < admitKinds; k++ {
		w.Sample("soundgate_admits_total", float64(s.metrics.admits[k].Load()), k.labels()...)
	}

	w.Family("soundgate_refusals_total", metrics.TypeCounter, "Requests and connections the server refused, by reason (the protocol's error type; idle: an agent's connection closed for idleness).")
	refused := s.Refusals()
	for _, kind := range refusalKinds {
		w.Sample("soundgate_refusals_total", float64(refused[kind]), metrics.Label{Name: "reason", Value: kind})
		delete(refused, kind)
	}
	for kind, n := range refused {
		w.Sample("soundgate_refusals_total", float64(n), metrics.Label{Name: "reason", Value: kind})
	}

	w.Family("soundgate_connections", metrics.TypeGauge, "Open connections of the gate's protocol listeners, by role (none: no hello yet).")
	conns := s.connectionsByRole()
	for _, role := range []string{proto.RoleAgent.String(), proto.RoleApprover.String(), proto.RoleOperator.String(), roleNone} {
		w.Sample("soundgate_connections", float64(conns[role]), metrics.Label{Name: "role", Value: role})
	}

	w.Family("soundgate_inbox_subscriptions", metrics.TypeGauge, "Subscriptions to the inbox's changes: connections that watch it (pending --watch) and the approvers' page's open streams.")
	w.Sample("soundgate_inbox_subscriptions", float64(s.hub.len()))

	var runs int
	var stateBytes int64
	s.node.Inspect(func(g *core.Gate) { runs, stateBytes = g.Len(), g.StateBytes() })
	w.Family("soundgate_pending_approvals", metrics.TypeGauge, "Approvals pending a decision, in every run.")
	w.Sample("soundgate_pending_approvals", float64(s.node.Pending()))
	w.Family("soundgate_waiting_admits", metrics.TypeGauge, "Admits parked at the gate (wait_ms) until a decision, cancel, fence or timeout of their run, or the end of their wait.")
	w.Sample("soundgate_waiting_admits", float64(s.node.Waiting()))
	w.Family("soundgate_runs", metrics.TypeGauge, "Runs the gate holds, tombstones included, retired ones not (--max-runs bounds it).")
	w.Sample("soundgate_runs", float64(runs))
	w.Family("soundgate_state_bytes", metrics.TypeGauge, "Bytes of the state as its budget counts them (--max-state-bytes bounds it).")
	w.Sample("soundgate_state_bytes", float64(stateBytes))
	failed := 0.0
	if s.failure() != nil {
		failed = 1
	}
	w.Family("soundgate_failed_closed", metrics.TypeGauge, "1 while the gate is failed closed (its log failed: every request is refused until a restart), else 0.")
	w.Sample("soundgate_failed_closed", failed)

	l := s.cfg.Log
	if l == nil {
		return // in memory: no log
	}
	st, h := l.Stats(), l.Histograms()
	w.Family("soundgate_wal_records_total", metrics.TypeCounter, "Records appended to the write-ahead log since the gate started.")
	w.Sample("soundgate_wal_records_total", float64(st.Records))
	w.Family("soundgate_wal_bytes_total", metrics.TypeCounter, "Bytes of records written to the log's segments since the gate started.")
	w.Sample("soundgate_wal_bytes_total", float64(st.Bytes))
	w.Family("soundgate_wal_segments", metrics.TypeGauge, "Segment files of the log on disk.")
	w.Sample("soundgate_wal_segments", float64(st.Segments))
	w.Family("soundgate_wal_fdatasync_duration_seconds", metrics.TypeHistogram, "Seconds each fdatasync of a log segment took (group commits, segment ends and headers; not snapshots).")
	w.Histogram("soundgate_wal_fdatasync_duration_seconds", h.Fdatasync.Snapshot())
	w.Family("soundgate_wal_commit_records", metrics.TypeHistogram, "Records each group commit made durable with one fdatasync (its count: the group commits; its sum: the records).")
	w.Histogram("soundgate_wal_commit_records", h.CommitRecords.Snapshot())
	w.Family("soundgate_snapshot_duration_seconds", metrics.TypeHistogram, "Seconds each snapshot took from its begin to its commit, compaction included (paced: it keeps to a fifth of a core and of the disk).")
	w.Histogram("soundgate_snapshot_duration_seconds", h.Snapshot.Snapshot())
}

// connectionsByRole counts the open connections by role (roleNone before hello).
func (s *Server) connectionsByRole() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for ss := range s.sessions {
		role := roleNone
		if ss.cred != nil {
			role = ss.cred.Role.String()
		}
		out[role]++
	}
	return out
}

func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}
