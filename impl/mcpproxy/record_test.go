package mcpproxy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/stretchr/testify/require"
)

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// TestRecordReplay: a result that fits is recorded whole and replayed as it was.
func TestRecordReplay(t *testing.T) {
	rec, err := resultRecord(textResult("wrote 3 bytes <ok>"), proto.ResultBytesMax)
	require.NoError(t, err)
	r := replay(proto.AdmitResult{Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: rec})
	require.NotNil(t, r.Result, r.Why)
	require.Equal(t, "wrote 3 bytes <ok>", r.Result.Content[0].(*mcp.TextContent).Text)
}

// TestRecordTooLarge: a result past the gate's limit is recorded by digest and
// length only (never cut), and its replay says the result is not available.
func TestRecordTooLarge(t *testing.T) {
	big := strings.Repeat("x", proto.ResultBytesMax)
	rec, err := resultRecord(textResult(big), proto.ResultBytesMax)
	require.NoError(t, err)
	require.LessOrEqual(t, len(rec), proto.ResultBytesMax)
	var got Record
	require.NoError(t, json.Unmarshal([]byte(rec), &got))
	require.Nil(t, got.Result)
	require.Len(t, got.SHA256, 64)
	require.Greater(t, got.Bytes, proto.ResultBytesMax)
	r := replay(proto.AdmitResult{Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: rec})
	require.Nil(t, r.Result)
	require.Contains(t, r.Why, "too large to record")
}

// TestReplayRefusesWhatItCannotTrust: no outcome yet, a record of someone else, a
// result that does not match its digest, an error record: no result is invented.
func TestReplayRefusesWhatItCannotTrust(t *testing.T) {
	rec, _ := resultRecord(textResult("a"), proto.ResultBytesMax)
	tampered := strings.Replace(rec, `"text":"a"`, `"text":"b"`, 1)
	require.NotEqual(t, rec, tampered)
	for name, a := range map[string]proto.AdmitResult{
		"not completed": {Answer: core.AnswerDuplicate},
		"foreign":       {Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: `"250 OK"`},
		"other version": {Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: `{"v":2,"result":{}}`},
		"tampered":      {Answer: core.AnswerDuplicate, Outcome: core.OutcomeOK, Result: tampered},
		"error":         {Answer: core.AnswerDuplicate, Outcome: core.OutcomeFailed, Result: errorRecord("boom", proto.ResultBytesMax)},
	} {
		r := replay(a)
		require.Nil(t, r.Result, name)
		require.NotEmpty(t, r.Why, name)
	}
}

// TestFitsLine: a record within the result limit can still be too long for the wire
// once escaped; fitsLine tells.
func TestFitsLine(t *testing.T) {
	require.True(t, fitsLine("r", "k", strings.Repeat("a", proto.ResultBytesMax)))
	require.False(t, fitsLine("r", "k", strings.Repeat("\x01", proto.ResultBytesMax)))
}
