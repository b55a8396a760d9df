package server

import (
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// inbox answers a pending request: the pending approvals of the runs the session's
// token covers (Credential.Allows), oldest first, a page at a time. The page is cut
// to fit one line (proto.PendingResult.Fit), and like every answer it is sent once
// the log holds what it read.
func (ss *session) inbox(req *proto.Request) answer {
	q := core.InboxQuery{Scope: ss.cred.Allows, Limit: int(req.Limit)}
	if q.Limit == 0 {
		q.Limit = proto.PendingLimitDefault
	}
	if req.Cursor != "" {
		after, err := proto.ParseCursor(req.Cursor)
		if err != nil { // the decoder checked it: a request built by hand
			de := &proto.DecodeError{Err: proto.ErrOutOfRange, ID: req.ID, Field: "params.cursor", Offset: -1, Detail: err.Error()}
			return answer{id: req.ID, line: proto.AppendError(nil, req.ID, de)}
		}
		q.After = &after
	}
	a := ss.s.node.Inbox(q)
	if a.Err != nil {
		return answer{id: req.ID, line: proto.AppendError(nil, req.ID, wireError(a.Err)), after: a.After}
	}
	res := proto.PendingResult{More: a.More}
	if len(a.Approvals) > 0 {
		res.Approvals = make([]proto.PendingApproval, len(a.Approvals))
	}
	for i, ap := range a.Approvals {
		p := proto.PendingApproval{Run: ap.Run, Key: ap.Key, SinceMs: ap.Since, Description: ap.Description, ArgsDigest: ap.ArgsDigest}
		if ap.Since != 0 {
			p.AgeMs = max(int64(a.Now-ap.Since), 0) // a clock stepped back says 0, not less
		}
		res.Approvals[i] = p
	}
	res.Fit(req.ID, proto.LineBytesMax)
	return answer{id: req.ID, line: proto.AppendResult(nil, req.ID, &res), after: a.After}
}
