package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// The page's live inbox: GET /api/events, a stream of server-sent events
// (text/event-stream) from Server.Subscribe in the scope of the session's token.
// The page reads it with fetch rather than EventSource, which cannot send the CSRF
// header. Events, each one line of JSON:
//
//	event: ready    the subscription holds: list the inbox now, then apply what follows
//	event: inbox    one change (pageEvent): pending, approved, rejected, cancelled, fenced, timed_out
//	event: resync   events were lost (the stream fell behind): list the inbox again
//	event: end      the stream is over: session_ended true when the session ended (signed
//	                out, expired, its token reloaded away), false when the gate stops
//
// and a comment line every webHeartbeat while nothing happens.

// pageEvent is one change of the inbox as the page gets it.
type pageEvent struct {
	Kind        InboxEventKind `json:"kind"`
	Run         string         `json:"run"`
	Key         string         `json:"key"`
	SinceMs     int64          `json:"since_ms,omitempty"`
	Description string         `json:"description,omitempty"`
	ArgsDigest  string         `json:"args_digest,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	AtMs        int64          `json:"at_ms"`
	Shown       shown          `json:"shown"`
}

// appendSSE appends one server-sent event; data is one line of JSON.
func appendSSE(dst []byte, event string, data any) []byte {
	b, err := json.Marshal(data)
	if err != nil { // only the page's own types are marshalled
		b = []byte("{}")
	}
	dst = append(dst, "event: "...)
	dst = append(dst, event...)
	dst = append(dst, "\ndata: "...)
	dst = append(dst, b...)
	return append(dst, "\n\n"...)
}

// addStream counts one more stream of ps, or reports false at a limit.
func (wb *web) addStream(ps *pageSession) bool {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.streams >= webStreamsMax || ps.streams >= webStreamsPerSessionMax {
		return false
	}
	wb.streams++
	ps.streams++
	return true
}

func (wb *web) dropStream(ps *pageSession) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	wb.streams--
	ps.streams--
	ps.used = wb.now() // idle from the end of its last stream
}

// standing says why ps may stream no more, or "": it ended, expired, or the roles
// no longer hold its token.
func (wb *web) standing(ps *pageSession) string {
	select {
	case <-ps.done:
		return "the session ended (signed out, or found expired or revoked by another request)"
	default:
	}
	wb.mu.Lock()
	why := wb.expiredLocked(ps, wb.now())
	wb.mu.Unlock()
	if why == "" && !wb.s.holds(ps.cred) {
		ps.ss.revoked.Store(true)
		why = errRevoked.Error()
	}
	if why != "" {
		wb.end(ps)
	}
	return why
}

// serveEvents streams the inbox's changes to a signed-in page until the page goes,
// its session ends or the gate stops. The listener's write timeout would cut it: it
// moves the write deadline past each write, so that only a page that stops reading
// is cut. (The read timeout ends with the request's headers: net/http reads on
// without a deadline, to learn that the page went.)
func (wb *web) serveEvents(w http.ResponseWriter, r *http.Request) {
	if e := checkOrigin(r, false); e != nil {
		wb.refuse(w, r, e, "forbidden")
		return
	}
	ps, ok := wb.session(w, r)
	if !ok {
		return
	}
	if !wb.addStream(ps) {
		wb.refuse(w, r, errWeb(http.StatusServiceUnavailable, "overloaded", "too many event streams are open (at most %d, %d per session)", webStreamsMax, webStreamsPerSessionMax),
			"overloaded", "token_name", ps.cred.Name)
		return
	}
	defer wb.dropStream(ps)
	rc := http.NewResponseController(w)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(wb.times.write))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	go func() {
		select {
		case <-ps.done:
			stop()
		case <-ctx.Done():
		}
	}()
	sub := wb.s.Subscribe(ps.cred.Allows, 0)
	defer sub.Close()
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if !write(appendSSE(nil, "ready", struct{}{})) {
		return
	}
	end := func(why string, sessionEnded bool) {
		write(appendSSE(nil, "end", map[string]any{"why": why, "session_ended": sessionEnded}))
	}
	quiet := time.Now()
	var buf []byte
	for {
		pctx, cancel := context.WithTimeout(ctx, wb.times.poll)
		evs, lost, closed, err := sub.Next(pctx)
		cancel()
		if r.Context().Err() != nil {
			return // the page went
		}
		if why := wb.standing(ps); why != "" {
			end(why, true)
			return
		}
		switch {
		case closed:
			end("the gate is shutting down", false)
			return
		case err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled):
			end("the gate failed closed: "+err.Error(), false)
			return
		}
		buf = buf[:0]
		if lost {
			buf = appendSSE(buf, "resync", struct{}{})
		}
		for _, ev := range evs {
			a := ev.Approval
			buf = appendSSE(buf, "inbox", pageEvent{Kind: ev.Kind, Run: string(a.Run), Key: string(a.Key), SinceMs: int64(a.Since),
				Description: a.Description, ArgsDigest: a.ArgsDigest, Reason: ev.Reason, AtMs: int64(ev.At),
				Shown: shownOf(string(a.Run), string(a.Key), a.Description, ev.Reason)})
		}
		if len(buf) == 0 && time.Since(quiet) >= wb.times.heartbeat {
			buf = append(buf, ": heartbeat\n\n"...)
		}
		if len(buf) > 0 {
			if !write(buf) {
				return
			}
			quiet = time.Now()
		}
	}
}
