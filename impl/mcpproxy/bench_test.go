package mcpproxy

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkProxyOverhead measures, in one run, an ungated tools/call straight to the
// upstream and the same call through the proxy (in-memory transports, a real gate in
// process over its Unix socket). Every call through the proxy asks the gate: an admit
// before the forward and a complete after it, each a durable-before-reply round trip
// of the gate (in memory here). Each call has new arguments, so each is a new effect.
// It reports p50 and p99 of both, in microseconds, and their ratios:
//
//	go test -run '^$' -bench ProxyOverhead -benchtime 5000x ./impl/mcpproxy
func BenchmarkProxyOverhead(b *testing.B) {
	ctx := context.Background()
	direct := directSession(b, upstreamServer(&world{}, func() {}))
	e := newEnv(b, envOptions{})
	const keysPerRun = 50000 // under the gate's default keys per run
	var direct_, proxied []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		args := textArgs{Text: fmt.Sprint("bench-", i)}
		t0 := time.Now()
		if _, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "note", Arguments: args}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r := fmt.Sprint("bench-run-", i/keysPerRun)
		if i%keysPerRun == 0 {
			b.StopTimer()
			if _, err := e.op.Open(ctx, r, 0); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			t1 = time.Now()
		}
		res, err := e.call(ctx, "note", args, mcp.Meta{MetaRun: r})
		if err != nil || res.IsError {
			b.Fatalf("through the proxy: %v %v", err, res)
		}
		t2 := time.Now()
		direct_ = append(direct_, t1.Sub(t0))
		proxied = append(proxied, t2.Sub(t1))
	}
	b.StopTimer()
	if b.N < 100 {
		return // too few samples for a p99
	}
	pct := func(d []time.Duration, p float64) float64 {
		slices.Sort(d)
		return float64(d[min(len(d)-1, int(p*float64(len(d))))].Nanoseconds()) / 1e3
	}
	dp50, dp99, pp50, pp99 := pct(direct_, 0.50), pct(direct_, 0.99), pct(proxied, 0.50), pct(proxied, 0.99)
	b.ReportMetric(dp50, "direct-p50-µs")
	b.ReportMetric(dp99, "direct-p99-µs")
	b.ReportMetric(pp50, "proxy-p50-µs")
	b.ReportMetric(pp99, "proxy-p99-µs")
	b.ReportMetric(pp50/dp50, "p50-ratio")
	b.ReportMetric(pp99/dp99, "p99-ratio")
}
