// Package proto is soundgate's wire protocol: newline-delimited JSON-RPC 2.0.
//
// One request is one JSON object on one line (LF or CRLF); one answer is one JSON object
// on one line. A request carries a client-chosen id so that a connection can pipeline;
// answers are matched to requests by that id, not by order. docs/protocol.md is the
// protocol's reference for client authors; this package is the Go side of it:
//
//   - Reader splits a byte stream into lines, bounded by LineBytesMax. An oversize
//     line is discarded up to its newline and reported as ErrLineTooLong; the stream
//     continues.
//   - Decoder turns one line into a Request, strictly: exact types, no unknown methods
//     or fields, no duplicate keys, valid UTF-8, every limit checked. Every failure is
//     a *DecodeError wrapping exactly one sentinel *Error (ErrParse, ErrWrongType, ...)
//     and, when the envelope allowed it, the request's id, so that the error answer
//     can carry it. The decoder never panics and allocates one string per request.
//   - AppendRequest, AppendResult and AppendError encode requests and answers into a
//     []byte; DecodeResponse and the result types' UnmarshalJSON read answers back
//     (for clients and tests). Decoding an encoded valid request gives it back exactly.
//
// The sub-package protoref is a deliberately simple reference decoder built on
// encoding/json; it exists only for tests and fuzzers to compare against.
//
// The vocabulary (statuses, answers, reasons, decisions, outcomes) and the core's
// typed errors come from impl/core: one concept, one name, on the wire and in the core.
package proto
