package wal

import (
	"errors"
	"io/fs"
	"testing"
)

// TestFailedErrorMessage: the message of a *FailedError names the operation, the file
// and the cause, and names the file once when the cause is a *fs.PathError about the
// same file. A cause that is not a *fs.PathError (a short write) is printed as it is.
//
// Kills: impl/wal/errors.go:FailedError.Error:boolean (&& made ||: a nil *PathError
// dereferenced for a plain cause).
func TestFailedErrorMessage(t *testing.T) {
	plain := errors.New("short write: 3 of 9 bytes")
	cases := []struct {
		name string
		err  *FailedError
		want string
	}{
		{"plain cause", &FailedError{Op: "write", Path: "/wal/1.wal", Err: plain},
			"soundgate/wal: log failed: write /wal/1.wal: short write: 3 of 9 bytes"},
		{"path error about the same file", &FailedError{Op: "fdatasync", Path: "/wal/1.wal",
			Err: &fs.PathError{Op: "sync", Path: "/wal/1.wal", Err: errors.New("eio")}},
			"soundgate/wal: log failed: fdatasync /wal/1.wal: eio"},
		{"path error about another file", &FailedError{Op: "sync dir", Path: "/wal",
			Err: &fs.PathError{Op: "sync", Path: "/other", Err: errors.New("eio")}},
			"soundgate/wal: log failed: sync dir /wal: sync /other: eio"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Fatalf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestCorruptErrorMessage: the message names the offset when the damage has one (0
// included: a bad segment header is at offset 0) and leaves it out for the file as a
// whole (-1).
//
// Kills: impl/wal/errors.go:CorruptError.Error boundary, negate-cond and constant
// mutants of the Offset < 0 test.
func TestCorruptErrorMessage(t *testing.T) {
	cases := []struct {
		off  int64
		want string
	}{
		{-1, "soundgate/wal: corrupt log: /wal/x.wal: missing"},
		{0, "soundgate/wal: corrupt log: /wal/x.wal at offset 0: bad magic"},
		{16, "soundgate/wal: corrupt log: /wal/x.wal at offset 16: bad lsn"},
	}
	reasons := map[int64]string{-1: "missing", 0: "bad magic", 16: "bad lsn"}
	for _, tc := range cases {
		e := &CorruptError{Path: "/wal/x.wal", Offset: tc.off, Reason: reasons[tc.off]}
		if got := e.Error(); got != tc.want {
			t.Errorf("Offset %d: Error() = %q, want %q", tc.off, got, tc.want)
		}
		if !errors.Is(e, ErrCorrupt) {
			t.Errorf("Offset %d: errors.Is(ErrCorrupt) is false", tc.off)
		}
	}
}
