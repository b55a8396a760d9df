package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/node"
	"github.com/soundgate/soundgate/impl/server/servertest"
	"github.com/soundgate/soundgate/impl/wal"
)

// inBothModes runs bench as a sub-benchmark on a gate in memory and on a durable one,
// with the gate's socket.
func inBothModes(b *testing.B, bench func(b *testing.B, sock string)) {
	for _, durable := range []bool{false, true} {
		name := map[bool]string{false: "memory", true: "durable"}[durable]
		b.Run(name, func(b *testing.B) { bench(b, benchServer(b, durable)) })
	}
}

// benchServer starts a gate for a benchmark: in memory, or durable on a log in a
// temporary directory.
func benchServer(b *testing.B, durable bool) string {
	var cfg node.Config
	if durable {
		l, err := wal.Open(filepath.Join(b.TempDir(), "data"), wal.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		cfg.Log = l
	}
	return servertest.Start(b, servertest.Options{Node: cfg}).Unix
}

// BenchmarkRoundTrip measures one admit of a new key through the server over a Unix
// socket, by one client waiting for each answer: latency, not throughput.
func BenchmarkRoundTrip(b *testing.B) {
	inBothModes(b, func(b *testing.B, sock string) {
		ctx := context.Background()
		op, err := client.Dial(ctx, sock, servertest.OperatorToken)
		if err != nil {
			b.Fatal(err)
		}
		defer op.Close()
		op.Open(ctx, "bench", 0)
		c, err := client.Dial(ctx, sock, servertest.AgentToken)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, err := c.Admit(ctx, "bench", fmt.Sprint(i), 1, client.AdmitOptions{})
			if err != nil || res.Answer != core.AnswerAdmit {
				b.Fatal(res, err)
			}
		}
	})
}

// BenchmarkPipelined measures throughput: 64 goroutines pipelining admits on 4
// connections (durable: they share fdatasyncs).
func BenchmarkPipelined(b *testing.B) {
	inBothModes(b, func(b *testing.B, sock string) {
		ctx := context.Background()
		op, _ := client.Dial(ctx, sock, servertest.OperatorToken)
		defer op.Close()
		const runs = 256 // spread the keys: one run holds at most KeysPerRunMax of them
		for r := 0; r < runs; r++ {
			op.Open(ctx, fmt.Sprint("bench-", r), 0)
		}
		conns := make([]*client.Client, 4)
		for i := range conns {
			conns[i], _ = client.Dial(ctx, sock, servertest.AgentToken)
			defer conns[i].Close()
		}
		var seq atomic.Int64
		b.SetParallelism(16) // 16 x GOMAXPROCS goroutines
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			c := conns[seq.Add(1)%4]
			for pb.Next() {
				k := seq.Add(1)
				res, err := c.Admit(ctx, fmt.Sprint("bench-", k%runs), fmt.Sprint(k), 1, client.AdmitOptions{})
				if err != nil || res.Answer != core.AnswerAdmit {
					b.Error(res, err)
					return
				}
			}
		})
	})
}
