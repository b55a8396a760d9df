package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
)

// benchGate starts a durable gate in the test process on a Unix socket.
func benchGate(t *testing.T) string {
	l, err := wal.Open(filepath.Join(t.TempDir(), "data"), wal.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	return servertest.Start(t, servertest.Options{Node: node.Config{Log: l}}).Unix
}

// captureStdout runs f with os.Stdout redirected and returns what it printed.
func captureStdout(t *testing.T, f func() int) (string, int) {
	r, w, err := os.Pipe()
	require.NoError(t, err)
	saved := os.Stdout
	os.Stdout = w
	out := make(chan string)
	go func() { b, _ := io.ReadAll(r); out <- string(b) }()
	code := f()
	os.Stdout = saved
	w.Close()
	return <-out, code
}

var admissionsLine = regexp.MustCompile(`(?m)^admissions: (\d+) in .*; errors: (\d+)$`)

// TestBench runs soundgate-bench against a gate with each driver and mix: it must
// admit, check every answer (an error makes the exit code non-zero) and print the
// figures the benchmark script reads.
func TestBench(t *testing.T) {
	sock := benchGate(t)
	for _, tc := range []struct {
		name  string
		args  []string
		lines []string // latency lines that must appear
	}{
		{"raw request-response", []string{"--clients", "4", "--pipeline", "1"}, []string{"latency new "}},
		{"raw pipelined", []string{"--clients", "2", "--pipeline", "16"}, []string{"latency new "}},
		{"raw with duplicates", []string{"--clients", "2", "--pipeline", "4", "--mix", "new=50,dup=50"}, []string{"latency new ", "latency dup "}},
		{"raw, a goroutine per connection", []string{"--raw-goroutines", "--clients", "4", "--pipeline", "1"}, []string{"latency new "}},
		{"raw pipelined, a goroutine per connection", []string{"--raw-goroutines", "--clients", "2", "--pipeline", "16", "--mix", "new=50,dup=50"}, []string{"latency new ", "latency dup "}},
		{"client pipelined", []string{"--driver", "client", "--clients", "2", "--pipeline", "4"}, []string{"latency new "}},
		{"client gated", []string{"--clients", "2", "--mix", "new=40,dup=30,gated=30"}, []string{"latency new ", "latency dup ", "latency gated "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--addr", "unix:" + sock, "--token", servertest.AgentToken, "--operator-token", servertest.OperatorToken,
				"--approver-token", servertest.ApproverToken, "--duration", "300ms", "--runs", "4", "-q"}, tc.args...)
			out, code := captureStdout(t, func() int { return benchMain(args) })
			require.Equal(t, exitOK, code, "output:\n%s", out)
			m := admissionsLine.FindStringSubmatch(out)
			require.NotNil(t, m, "no admissions line in:\n%s", out)
			n, _ := strconv.Atoi(m[1])
			require.Positive(t, n, "admissions")
			require.Equal(t, "0", m[2], "errors")
			for _, l := range tc.lines {
				require.Contains(t, out, "\n"+l)
			}
		})
	}
}

// TestBenchUsage: flags the bench cannot honour are refused before it connects.
func TestBenchUsage(t *testing.T) {
	for _, args := range [][]string{
		{"--driver", "raw", "--mix", "new=50,gated=50", "--approver-token", servertest.ApproverToken},
		{"--driver", "epoll"},
		{"--driver", "client", "--raw-goroutines"},
		{"--raw-goroutines", "--mix", "new=50,gated=50", "--approver-token", servertest.ApproverToken},
		{"--pipeline", "0"},
		{"--mix", "new=50"},
	} {
		all := append([]string{"--addr", "unix:/nonexistent", "--token", servertest.AgentToken, "--operator-token", servertest.OperatorToken}, args...)
		_, code := captureStdout(t, func() int { return benchMain(all) })
		require.Equal(t, exitUsage, code, "%v", args)
	}
}

// TestRawDriverChecksAnswers: the raw driver counts an answer as an admission only if
// it is the expected answer to the oldest request in flight.
func TestRawDriverChecksAnswers(t *testing.T) {
	admit := func(id int64, a core.Answer) string {
		return string(proto.AppendResult(nil, proto.IntID(id), &proto.AdmitResult{Answer: a, Epoch: 1}))
	}
	for _, tc := range []struct {
		name   string
		kind   string
		answer string
		err    string // "" for a good answer
	}{
		{"admitted", "new", admit(1, core.AnswerAdmit), ""},
		{"duplicate", "dup", admit(1, core.AnswerDuplicate), ""},
		{"new key answered duplicate", "new", admit(1, core.AnswerDuplicate), "answer duplicate, want admit"},
		{"duplicate answered admit", "dup", admit(1, core.AnswerAdmit), "answer admit, want duplicate"},
		{"out of order", "new", admit(2, core.AnswerAdmit), "out of order"},
		{"refusal", "new", string(proto.AppendError(nil, proto.IntID(1), proto.ErrOverloaded)), "overloaded"},
		{"not an answer", "new", "hello\n", "soundgate/proto"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &bencher{}
			d := &rawDriver{b: b, rd: proto.NewReader(strings.NewReader(tc.answer)), lat: map[string][]time.Duration{},
				inflight: []rawReq{{id: 1, kind: tc.kind, k: rawKey{"r", "k"}, start: time.Now()}}}
			err := d.answer()
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Zero(t, b.admissions.Load())
				return
			}
			require.NoError(t, err)
			require.Len(t, d.lat[tc.kind], 1)
			want := int64(0)
			if tc.kind == "new" {
				want = 1
			}
			require.Equal(t, want, b.admissions.Load())
		})
	}
}

// TestRawLoopStopsOnAWrongAnswer: the event loop of the raw driver checks answers as
// the goroutine driver does, and a wrong one ends that connection and counts as an
// error (exit status 1), while the other connections run to the end.
func TestRawLoopStopsOnAWrongAnswer(t *testing.T) {
	if !rawLoopAvailable {
		t.Skip("no event loop on this platform: the goroutine driver is tested by TestBench")
	}
	dir := t.TempDir()
	l, err := net.Listen("unix", filepath.Join(dir, "fake.sock"))
	require.NoError(t, err)
	defer l.Close()
	// The fake gate answers the hello, then admits correctly, except on its first
	// connection, whose second answer says duplicate.
	go func() {
		for i := 0; ; i++ {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			go func(bad bool) {
				defer nc.Close()
				r := proto.NewReader(nc)
				for n := 0; ; n++ {
					line, err := r.ReadLine()
					if err != nil {
						return
					}
					var dec proto.Decoder
					var req proto.Request
					if dec.Decode(line, &req) != nil {
						return
					}
					var res proto.Result = &proto.AdmitResult{Answer: core.AnswerAdmit, Epoch: 1}
					if req.Method == proto.MethodHello {
						res = &proto.HelloResult{Version: proto.Version, Role: proto.RoleAgent, Server: "fake"}
					} else if bad && n == 2 {
						res = &proto.AdmitResult{Answer: core.AnswerDuplicate, Epoch: 1}
					}
					if _, err := nc.Write(proto.AppendResult(nil, req.ID, res)); err != nil {
						return
					}
				}
			}(i == 0)
		}
	}()
	b := &bencher{mix: benchMix{fresh: 100}, runs: []string{"r"}}
	var ds []*rawDriver
	for i := 0; i < 3; i++ {
		nc, rd, err := dialRaw(context.Background(), "unix:"+l.Addr().String(), servertest.AgentToken)
		require.NoError(t, err)
		ds = append(ds, &rawDriver{b: b, nc: nc, rd: rd, id: i, depth: 1, rng: uint64(i) + 1})
	}
	lat, err := rawLoop(ds, time.Now().Add(200*time.Millisecond))
	require.NoError(t, err)
	require.EqualValues(t, 1, b.errors.Load(), "the wrong answer is one error")
	require.ErrorContains(t, b.firstErr.Load().(error), "answer duplicate, want admit")
	require.True(t, ds[0].finished)
	require.Greater(t, len(lat["new"]), 10, "the other connections ran on")
}

// TestParseMix: --mix names each operation's share once; an unknown name, a
// malformed element or shares that do not add up to 100 are refused.
func TestParseMix(t *testing.T) {
	for _, c := range []struct {
		in   string
		want benchMix
		err  string
	}{
		{"new=100", benchMix{fresh: 100}, ""},
		{"new=70,dup=20,gated=10", benchMix{fresh: 70, dup: 20, gated: 10}, ""},
		{"gated=50,new=50", benchMix{fresh: 50, gated: 50}, ""},
		{"new=90,held=10", benchMix{}, `unknown operation "held"`},
		{"new", benchMix{}, `bad mix element "new"`},
		{"new=-1,dup=101", benchMix{}, `bad mix element "new=-1"`},
		{"new=50,dup=40", benchMix{}, "add up to 100"},
	} {
		got, err := parseMix(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
	}
}
