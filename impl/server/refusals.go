package server

import (
	"log/slog"
	"sync"
	"time"
)

// refusalLogEvery is how often at most one kind of refusal is logged: a flood of
// refused connections must not become a flood of log lines.
const refusalLogEvery = time.Second

// refusals counts the gate's refusals by kind (the protocol's error type) and logs
// them, at most one line per kind per refusalLogEvery, each with how many were not
// logged since the last. Attributes name the token by its name, never the token.
type refusals struct {
	mu    sync.Mutex
	kinds map[string]*refusalKind
}

type refusalKind struct {
	total, unlogged uint64
	logged          time.Time
}

func (r *refusals) add(log *slog.Logger, kind string, attrs ...any) {
	now := time.Now()
	r.mu.Lock()
	if r.kinds == nil {
		r.kinds = map[string]*refusalKind{}
	}
	k := r.kinds[kind]
	if k == nil {
		k = &refusalKind{}
		r.kinds[kind] = k
	}
	k.total++
	if now.Sub(k.logged) < refusalLogEvery {
		k.unlogged++
		r.mu.Unlock()
		return
	}
	total, unlogged := k.total, k.unlogged
	k.logged, k.unlogged = now, 0
	r.mu.Unlock()
	log.Warn("refused", append([]any{"refusal", kind, "total", total, "not_logged_since_last", unlogged}, attrs...)...)
}

// Refusals returns how many requests and connections the server refused, by the
// protocol's error type (overloaded, shutting_down, unauthenticated, forbidden,
// quota), and how many agents' connections it closed for idleness (idle; no error
// is sent for those: the connection is closed as a hello timeout closes it).
func (s *Server) Refusals() map[string]uint64 {
	s.refused.mu.Lock()
	defer s.refused.mu.Unlock()
	out := make(map[string]uint64, len(s.refused.kinds))
	for kind, k := range s.refused.kinds {
		out[kind] = k.total
	}
	return out
}
