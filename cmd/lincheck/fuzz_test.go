package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFuzzTargets(t *testing.T) {
	for _, tc := range []struct {
		list, fuzztime string
		want           []fuzzBudget
		err            string
	}{
		{list: "FuzzSession,FuzzLogRecovery", fuzztime: "20000x",
			want: []fuzzBudget{{"FuzzSession", "20000x"}, {"FuzzLogRecovery", "20000x"}}},
		{list: "FuzzSession=15000x, FuzzLogRecovery", fuzztime: "30s",
			want: []fuzzBudget{{"FuzzSession", "15000x"}, {"FuzzLogRecovery", "30s"}}},
		{list: "FuzzSession=", fuzztime: "30s", err: "empty budget"},
		{list: "Session", fuzztime: "30s", err: "not a fuzz target"},
		{list: "FuzzSession,,FuzzLogRecovery", fuzztime: "30s", err: "not a fuzz target"},
	} {
		got, err := parseFuzzTargets(tc.list, tc.fuzztime)
		if tc.err != "" {
			assert.ErrorContains(t, err, tc.err, tc.list)
			continue
		}
		require.NoError(t, err, tc.list)
		assert.Equal(t, tc.want, got, tc.list)
	}
}

// TestDeadlineRace: the race's output (as CI printed it for FuzzRoundTrip) is named
// only for a duration budget and only when go saved no input.
func TestDeadlineRace(t *testing.T) {
	race := "fuzz: elapsed: 20s, execs: 420527 (20091/sec), new interesting: 0 (total: 282)\n" +
		"--- FAIL: FuzzRoundTrip (20.12s)\n    context deadline exceeded\nFAIL\nexit status 1\n"
	crasher := "--- FAIL: FuzzSession (3.02s)\n    --- FAIL: FuzzSession (0.00s)\n        session_test.go:80: P3 violated\n\n" +
		"    Failing input written to testdata/fuzz/FuzzSession/771e938e4458e983\n" +
		"    To re-run:\n    go test -run=FuzzSession/771e938e4458e983\nFAIL\n"
	for _, tc := range []struct {
		name, out, budget string
		want              bool
	}{
		{"race, duration", race, "20s", true},
		{"same text, count budget", race, "400000x", false},
		{"a finding", crasher, "20s", false},
		{"a finding mentioning the deadline", crasher + "\n    context deadline exceeded\n", "20s", false},
	} {
		assert.Equal(t, tc.want, deadlineRace([]byte(tc.out), tc.budget), tc.name)
	}
}
