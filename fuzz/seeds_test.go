package fuzz

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/prototest"
)

var updateSeeds = flag.Bool("update-seeds", false, "rewrite the decoder targets' seed corpora under testdata/fuzz")

// seed is one corpus file: its name and the Go-syntax values, one per argument.
type seed struct {
	name   string
	values []string
}

func bytesArg(b []byte) string  { return "[]byte(" + strconv.Quote(string(b)) + ")" }
func stringArg(s string) string { return "string(" + strconv.Quote(s) + ")" }

func fileName(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if ('a' <= c && c <= 'z') || ('0' <= c && c <= '9') {
			b.WriteRune(c)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// lineSeeds are the request lines of the protocol's tests: one valid line per method
// and optional field, and every bad input with its own expected error.
func lineSeeds() []seed {
	var out []seed
	for _, tc := range prototest.Valid {
		out = append(out, seed{"valid-" + fileName(tc.Name), []string{bytesArg([]byte(tc.Line))}})
	}
	for _, tc := range prototest.Bad {
		out = append(out, seed{"bad-" + fileName(tc.Name), []string{bytesArg([]byte(tc.Line))}})
	}
	return out
}

// answerSeeds are answer lines: one per admit answer and denial reason, one per
// method's result, and one per error type.
func answerSeeds() []seed {
	results := map[string]proto.Result{
		"hello":                   &proto.HelloResult{Version: 1, Role: proto.RoleAgent, Server: "soundgate 0.1.0"},
		"open-created":            &proto.OpenResult{Run: "r1", Status: core.RunActive, Epoch: 1, DeadlineMs: 1767225600000, Created: true},
		"open-existing":           &proto.OpenResult{Run: "r1", Status: core.RunCancelled, Epoch: 2},
		"admit-admit":             &proto.AdmitResult{Answer: core.AnswerAdmit, Epoch: 1},
		"admit-held":              &proto.AdmitResult{Answer: core.AnswerHeld, Epoch: 1},
		"admit-duplicate":         &proto.AdmitResult{Answer: core.AnswerDuplicate, Epoch: 1},
		"admit-duplicate-outcome": &proto.AdmitResult{Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: "250 OK", Epoch: 1},
		"admit-denied-cancelled":  &proto.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonCancelled, Epoch: 2},
		"admit-denied-timed-out":  &proto.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonTimedOut, Epoch: 2},
		"admit-denied-stale":      &proto.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonStaleEpoch, Epoch: 3},
		"admit-denied-rejected":   &proto.AdmitResult{Answer: core.AnswerDenied, Reason: core.ReasonRejected, Epoch: 1},
		"decide":                  &proto.DecideResult{Decision: core.Approve},
		"decide-repeat":           &proto.DecideResult{Decision: core.Reject, Repeat: true},
		"complete":                &proto.CompleteResult{},
		"cancel":                  &proto.CancelResult{Run: "r1", Status: core.RunCancelled, Epoch: 2},
		"fence":                   &proto.FenceResult{Run: "r1", Epoch: 2},
		"status": &proto.StatusResult{Run: "r1", Status: core.RunActive, Epoch: 1, Pending: []core.Key{"k1"},
			Effect: &proto.EffectResult{Key: "k1", Status: core.EffectHeld, Epoch: 1, Gated: true}},
		"status-note": &proto.StatusResult{Run: "r1", Status: core.RunActive, Epoch: 1,
			Effect: &proto.EffectResult{Key: "k1", Status: core.EffectReleased, Epoch: 1, Gated: true, Approved: true,
				SinceMs: 1796031595713, Description: "Wire 120 EUR\nto <ACME>", ArgsDigest: prototest.Digest, Reason: "checked"}},
		"pending-empty": &proto.PendingResult{},
		"pending-more": &proto.PendingResult{Approvals: []proto.PendingApproval{
			{Run: "r1", Key: "wire", SinceMs: 1796031595713, AgeMs: 5000, Description: "Wire 120 EUR", ArgsDigest: prototest.Digest},
			{Run: "r2", Key: "k\u202e"}}, More: true, Cursor: prototest.Cursor},
	}
	var out []seed
	for name, r := range results {
		out = append(out, seed{"answer-" + name, []string{bytesArg(proto.AppendResult(nil, proto.IntID(7), r))}})
	}
	var errs []error
	for _, e := range proto.DecodeErrors {
		errs = append(errs, e)
	}
	for _, e := range proto.ServerErrors {
		errs = append(errs, e)
	}
	for _, e := range core.Errors {
		errs = append(errs, e)
	}
	for _, e := range errs {
		typ := proto.ErrorObjectOf(e).Type
		out = append(out, seed{"error-" + fileName(typ), []string{bytesArg(proto.AppendError(nil, proto.StringID("e"), e))}})
	}
	return out
}

// streamSeeds are byte streams for FuzzReaderSplit, each with the small limit's seed:
// short streams of two or three lines (LF, CRLF, blank lines, a last line without LF)
// built from the protocol's cases, the Reader's own cases (prototest.Streams, with
// their small limits), and one line over the real limit.
func streamSeeds() []seed {
	var out []seed
	add := func(name, data string, small uint8) {
		out = append(out, seed{name, []string{bytesArg([]byte(data)), fmt.Sprintf("byte(%d)", small)}})
	}
	for i, tc := range prototest.Valid {
		next := prototest.Valid[(i+1)%len(prototest.Valid)].Line
		switch i % 3 {
		case 0:
			add("lf-"+fileName(tc.Name), tc.Line+"\n"+next+"\n", uint8(20+i))
		case 1:
			add("crlf-blank-"+fileName(tc.Name), tc.Line+"\r\n\r\n \t\n"+next+"\r\n", uint8(40+i))
		case 2:
			add("partial-last-"+fileName(tc.Name), tc.Line+"\n"+next, uint8(i))
		}
	}
	for i, tc := range prototest.Bad {
		if len(tc.Line) < 512 && !strings.Contains(tc.Line, "\n") {
			add("bad-"+fileName(tc.Name), tc.Line+"\n"+prototest.Valid[i%len(prototest.Valid)].Line+"\n", uint8(i))
		}
	}
	for i, tc := range prototest.Streams {
		small := uint8(i)
		if tc.Limit <= 64 {
			small = uint8(tc.Limit - 1)
		}
		add("reader-"+fileName(tc.Name), tc.In, small)
	}
	add("oversize-line-then-valid", strings.Repeat("x", proto.LineBytesMax+1)+"\n"+prototest.Valid[0].Line+"\n", 10)
	add("lone-cr-and-empty", "\r\n\n\r\r\n{\"x\":1}\r", 1)
	return out
}

// roundTripSeeds are FuzzRoundTrip's arguments for every valid case's request.
func roundTripSeeds() []seed {
	var out []seed
	for _, tc := range prototest.Valid {
		r := tc.Want
		idKind := uint8(0)
		if r.ID.Kind == proto.IDString {
			idKind = 1
		}
		choice := uint8(0)
		if r.Decision == core.Reject || r.Outcome == core.OutcomeFailed {
			choice = 1
		}
		result, wait, run, key := r.Result, r.WaitMs, string(r.Run), string(r.Key)
		epoch, version, timeout := r.Epoch, r.Version, r.TimeoutMs
		if r.Description != "" || r.Reason != "" || r.Cursor != "" {
			choice |= 2
			result = r.Description + r.Reason
		}
		if r.ArgsDigest != "" {
			choice |= 4
		}
		if r.Limit > 0 {
			wait = r.Limit - 1
		}
		if r.Cursor != "" {
			pos, err := proto.ParseCursor(r.Cursor)
			if err != nil {
				panic(err)
			}
			run, key, timeout = string(pos.Run), string(pos.Key), int64(pos.Since)+1
		}
		if epoch > 0 {
			epoch--
		}
		if version > 0 {
			version--
		}
		if timeout > 0 {
			timeout--
		}
		m := slices.Index(proto.Methods, r.Method)
		out = append(out, seed{"valid-" + fileName(tc.Name), []string{
			fmt.Sprintf("byte(%d)", m), fmt.Sprintf("byte(%d)", idKind), fmt.Sprintf("int64(%d)", r.ID.Int), stringArg(r.ID.Str),
			stringArg(run), stringArg(key), fmt.Sprintf("uint64(%d)", epoch), "bool(" + strconv.FormatBool(r.Gated) + ")",
			fmt.Sprintf("int64(%d)", wait), fmt.Sprintf("int64(%d)", timeout), fmt.Sprintf("byte(%d)", choice),
			stringArg(result), stringArg(r.Token), fmt.Sprintf("int64(%d)", version),
		}})
	}
	return out
}

// decoderSeeds maps each decoder target to its seed corpus.
func decoderSeeds() map[string][]seed {
	return map[string][]seed{
		"FuzzDecode":         lineSeeds(),
		"FuzzDifferential":   lineSeeds(),
		"FuzzRoundTrip":      roundTripSeeds(),
		"FuzzReaderSplit":    streamSeeds(),
		"FuzzDecodeResponse": append(answerSeeds(), lineSeeds()[:3]...),
	}
}

// TestSeedCorpus checks that every seed of the decoder targets is committed under
// testdata/fuzz (go test runs them as regression tests); -update-seeds writes them.
// Files found there that are not seeds (crashers saved by go test -fuzz) are kept.
func TestSeedCorpus(t *testing.T) {
	for target, seeds := range decoderSeeds() {
		dir := filepath.Join("testdata", "fuzz", target)
		names := map[string]bool{}
		for _, s := range seeds {
			if names[s.name] {
				t.Fatalf("%s: two seeds named %s", target, s.name)
			}
			names[s.name] = true
			want := "go test fuzz v1\n" + strings.Join(s.values, "\n") + "\n"
			path := filepath.Join(dir, s.name)
			if *updateSeeds {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Errorf("seed %s missing (run: go test ./fuzz -run TestSeedCorpus -update-seeds): %v", path, err)
				continue
			}
			if string(got) != want {
				t.Errorf("seed %s is stale (run: go test ./fuzz -run TestSeedCorpus -update-seeds)", path)
			}
		}
	}
}
