package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

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
	return servertest.Start(b, servertest.Options{Node: benchNode(b, durable)}).Unix
}

// benchNode is a benchmark gate's node config: in memory, or a log in a temporary
// directory.
func benchNode(b *testing.B, durable bool) node.Config {
	var cfg node.Config
	if durable {
		l, err := wal.Open(filepath.Join(b.TempDir(), "data"), wal.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { l.Close() })
		cfg.Log = l
	}
	return cfg
}

// BenchmarkRoundTrip measures one admit of a new key through the server over a Unix
// socket, by one client waiting for each answer: latency, not throughput.
func BenchmarkRoundTrip(b *testing.B) { inBothModes(b, roundTrip) }

// roundTrip admits new keys one at a time on the gate at sock.
func roundTrip(b *testing.B, sock string) {
	{
		ctx := context.Background()
		op, err := client.Dial(ctx, sock, servertest.OperatorToken)
		if err != nil {
			b.Fatal(err)
		}
		defer op.Close()
		c, err := client.Dial(ctx, sock, servertest.AgentToken)
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		const keysPerRun = 1 << 14 // under core.Limits.KeysPerRunMax, however large b.N
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			run := fmt.Sprint("bench-", i/keysPerRun)
			if i%keysPerRun == 0 {
				b.StopTimer()
				op.Open(ctx, run, 0)
				b.StartTimer()
			}
			res, err := c.Admit(ctx, run, fmt.Sprint(i), 1, client.AdmitOptions{})
			if err != nil || res.Answer != core.AnswerAdmit {
				b.Fatal(res, err)
			}
		}
	}
}

// BenchmarkPipelined measures throughput: 64 goroutines pipelining admits on 4
// connections (durable: they share fdatasyncs).
func BenchmarkPipelined(b *testing.B) { inBothModes(b, pipelined) }

// pipelined admits new keys from 64 goroutines on 4 connections to the gate at sock.
func pipelined(b *testing.B, sock string) {
	{
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
	}
}

// BenchmarkMetrics measures what metrics cost the admit path: the same admits,
// pipelined as BenchmarkPipelined's (64 goroutines on 4 connections) and one at a
// time as BenchmarkRoundTrip's, on a gate without metrics (off), on one that counts
// and serves its HTTP listener (on), and on one that a goroutine also scrapes every
// 10 ms (scraped: Prometheus scrapes every 15 s by default). The ratios are the
// figures, never a wall-clock assertion; on a shared machine run the arms side by
// side several times rather than each many times in a row:
//
//	go test -c -o server.test ./impl/server
//	for i in 1 2 3 4 5 6; do ./server.test -test.run '^$' -test.bench 'BenchmarkMetrics/pipelined/memory'; done
func BenchmarkMetrics(b *testing.B) {
	for _, shape := range []string{"pipelined", "roundtrip"} {
		for _, durable := range []bool{false, true} {
			for _, arm := range []string{"off", "on", "scraped"} {
				name := fmt.Sprintf("%s/%s/metrics=%s", shape, map[bool]string{false: "memory", true: "durable"}[durable], arm)
				b.Run(name, func(b *testing.B) {
					g := benchGate(b, durable, arm != "off", arm == "scraped")
					if shape == "pipelined" {
						pipelined(b, g.Unix)
					} else {
						roundTrip(b, g.Unix)
					}
				})
			}
		}
	}
}

// benchGate starts a gate as benchServer does; with metrics, it counts and serves
// its HTTP listener, which with scraped a goroutine scrapes every 10 ms until the
// benchmark ends (it reports the scrapes per second).
func benchGate(b *testing.B, durable, metrics, scraped bool) *servertest.Gate {
	g := servertest.Start(b, servertest.Options{Node: benchNode(b, durable), HTTP: metrics})
	if !scraped {
		return g
	}
	stop, done := make(chan struct{}), make(chan struct{})
	var scrapes atomic.Int64
	go func() {
		defer close(done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			resp, err := http.Get(g.HTTP + "/metrics")
			if err != nil {
				b.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			scrapes.Add(1)
		}
	}()
	start := time.Now()
	b.Cleanup(func() {
		close(stop)
		<-done
		b.ReportMetric(float64(scrapes.Load())/time.Since(start).Seconds(), "scrapes/s")
	})
	return g
}

// BenchmarkScrape is one GET /metrics of a durable gate over loopback, the client's
// side included: what each scrape costs the machine (at Prometheus' default of one
// every 15 s, nothing).
func BenchmarkScrape(b *testing.B) {
	g := benchGate(b, true, true, false)
	ctx := context.Background()
	op, err := client.Dial(ctx, g.Unix, servertest.OperatorToken)
	if err != nil {
		b.Fatal(err)
	}
	defer op.Close()
	op.Open(ctx, "bench", 0)
	hc := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	var n int64
	for i := 0; i < b.N; i++ {
		resp, err := hc.Get(g.HTTP + "/metrics")
		if err != nil {
			b.Fatal(err)
		}
		m, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		n += m
	}
	b.ReportMetric(float64(n)/float64(b.N), "bytes/scrape")
}
