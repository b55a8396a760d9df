package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
)

// benchMix is the share of each kind of operation, in percent.
type benchMix struct{ fresh, dup, gated int }

func parseMix(s string) (benchMix, error) {
	var m benchMix
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(val)
		if !ok || err != nil || n < 0 {
			return m, fmt.Errorf("bad mix element %q (want name=percent)", part)
		}
		switch name {
		case "new":
			m.fresh = n
		case "dup":
			m.dup = n
		case "gated":
			m.gated = n
		default:
			return m, fmt.Errorf("unknown operation %q in the mix (new, dup, gated)", name)
		}
	}
	if m.fresh+m.dup+m.gated != 100 {
		return m, errors.New("the mix must add up to 100")
	}
	return m, nil
}

func benchMain(args []string) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	addr := fs.String("addr", envOr("SOUNDGATE_ADDR", "127.0.0.1:7433"), "gate address: host:port or unix:/path")
	agent := fs.String("token", os.Getenv("SOUNDGATE_TOKEN"), "agent token (its scope must cover the bench runs)")
	operator := fs.String("operator-token", os.Getenv("SOUNDGATE_OPERATOR_TOKEN"), "operator token, to open the bench runs")
	approver := fs.String("approver-token", os.Getenv("SOUNDGATE_APPROVER_TOKEN"), "approver token, for gated operations")
	clients := fs.Int("clients", 16, "connections, each with its own closed loop(s)")
	depth := fs.Int("pipeline", 1, "requests in flight per connection (pipelining depth)")
	duration := fs.Duration("duration", 10*time.Second, "how long to run")
	runs := fs.Int("runs", 64, "runs the load is spread over")
	prefix := fs.String("run-prefix", "bench-"+strconv.FormatInt(time.Now().UnixNano(), 36), "prefix of the bench run ids")
	mixFlag := fs.String("mix", "new=100", "operation mix in percent: new (admit a new key), dup (re-admit: duplicate), gated (held, approved, admitted)")
	quiet := fs.Bool("q", false, "no progress lines")
	goroutines := fs.Bool("raw-goroutines", false, "with --driver raw: a goroutine per connection instead of one event loop (Linux epoll, the default there)")
	driver := fs.String("driver", "", "how connections are driven: raw (the wire protocol, a window of pipelined requests per connection, like redis-benchmark) or client (the Go client library, a goroutine per request in flight); default raw, client for a mix with gated operations")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: soundgate-bench [flags]\n\nDrives a running gate with closed-loop load and prints admissions/s and latency\npercentiles (p50/p99/p999) per operation, with a progress line every second.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitUsage
	}
	mix, err := parseMix(*mixFlag)
	if err != nil {
		return fail(exitUsage, "--mix: %v", err)
	}
	switch {
	case *agent == "" || *operator == "":
		return fail(exitUsage, "bench needs --token (agent) and --operator-token")
	case mix.gated > 0 && *approver == "":
		return fail(exitUsage, "a mix with gated operations needs --approver-token")
	case *clients < 1 || *depth < 1 || *runs < 1:
		return fail(exitUsage, "--clients, --pipeline and --runs must be at least 1")
	}
	switch {
	case *driver == "" && mix.gated > 0:
		*driver = "client"
	case *driver == "":
		*driver = "raw"
	case *driver == "raw" && mix.gated > 0:
		return fail(exitUsage, "--driver raw does not do gated operations (they need an approver connection): use --driver client")
	case *driver != "raw" && *driver != "client":
		return fail(exitUsage, "--driver: unknown driver %q (raw, client)", *driver)
	}
	if *goroutines && *driver != "raw" {
		return fail(exitUsage, "--raw-goroutines applies to --driver raw only (the client driver has a goroutine per request)")
	}
	ctx := context.Background()
	op, err := client.Dial(ctx, *addr, *operator)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer op.Close()
	runIDs := make([]string, *runs)
	for i := range runIDs {
		runIDs[i] = fmt.Sprintf("%s-%d", *prefix, i)
		if _, err := op.Open(ctx, runIDs[i], 0); err != nil {
			return fail(exitFailure, "open %s: %v", runIDs[i], err)
		}
	}
	var ap *client.Client
	if mix.gated > 0 {
		if ap, err = client.Dial(ctx, *addr, *approver); err != nil {
			return fail(exitFailure, "%v", err)
		}
		defer ap.Close()
	}

	b := &bencher{mix: mix, runs: runIDs, operator: op, approver: ap}
	var loops []func(stop time.Time) map[string][]time.Duration
	if *driver == "raw" {
		var ds []*rawDriver
		for i := 0; i < *clients; i++ {
			nc, rd, err := dialRaw(ctx, *addr, *agent)
			if err != nil {
				return fail(exitFailure, "connection %d: %v", i, err)
			}
			defer nc.Close()
			ds = append(ds, &rawDriver{b: b, nc: nc, rd: rd, id: i, depth: *depth, rng: uint64(i)*0x9E3779B97F4A7C15 + 1})
		}
		if rawLoopAvailable && !*goroutines {
			loops = append(loops, func(stop time.Time) map[string][]time.Duration {
				lat, err := rawLoop(ds, stop)
				if err != nil {
					b.fail(err)
				}
				return lat
			})
		} else {
			for _, d := range ds {
				loops = append(loops, func(stop time.Time) map[string][]time.Duration { d.loop(stop); return d.lat })
			}
		}
	} else {
		conns := make([]*client.Client, *clients)
		for i := range conns {
			if conns[i], err = client.Dial(ctx, *addr, *agent); err != nil {
				return fail(exitFailure, "connection %d: %v", i, err)
			}
			defer conns[i].Close()
		}
		for i := 0; i < *clients**depth; i++ {
			w := &benchWorker{b: b, c: conns[i%*clients], id: i}
			loops = append(loops, func(stop time.Time) map[string][]time.Duration { w.loop(stop); return w.lat })
		}
	}
	fmt.Printf("bench: %s, %d clients x pipeline %d, %d runs, mix %s, driver %s, %s\n", *addr, *clients, *depth, *runs, *mixFlag, *driver, *duration)
	stop := time.Now().Add(*duration)
	var wg sync.WaitGroup
	lats := make([]map[string][]time.Duration, len(loops))
	for i, loop := range loops {
		wg.Add(1)
		go func() { defer wg.Done(); lats[i] = loop(stop) }()
	}
	start := time.Now()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last int64
progress:
	for {
		select {
		case <-done:
			break progress
		case <-tick.C:
			n := b.admissions.Load()
			if !*quiet {
				fmt.Printf("  %4.0fs  %8d admissions/s  (%d errors)\n", time.Since(start).Seconds(), n-last, b.errors.Load())
			}
			last = n
		}
	}
	elapsed := time.Since(start)
	lat := map[string][]time.Duration{}
	for _, l := range lats {
		for k, v := range l {
			lat[k] = append(lat[k], v...)
		}
	}
	total := b.admissions.Load()
	fmt.Printf("admissions: %d in %s = %.0f admissions/s; requests: %.0f/s; errors: %d\n",
		total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), float64(b.requests.Load())/elapsed.Seconds(), b.errors.Load())
	for _, name := range []string{"new", "dup", "gated"} {
		d := lat[name]
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		fmt.Printf("latency %-5s n=%-8d p50=%-9s p99=%-9s p999=%-9s max=%s\n", name, len(d),
			pct(d, 0.50), pct(d, 0.99), pct(d, 0.999), d[len(d)-1].Round(time.Microsecond))
	}
	if b.errors.Load() > 0 {
		fmt.Printf("first error: %v\n", b.firstErr.Load())
		return exitFailure
	}
	return exitOK
}

func pct(d []time.Duration, p float64) time.Duration {
	return d[min(len(d)-1, int(float64(len(d))*p))].Round(time.Microsecond)
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

type bencher struct {
	mix                          benchMix
	runs                         []string
	operator, approver           *client.Client
	admissions, requests, errors atomic.Int64
	firstErr                     atomic.Value
}

type benchWorker struct {
	b    *bencher
	c    *client.Client
	id   int
	seq  int
	done []string // keys this worker had admitted, for duplicates
	// gatedRun is this worker's own run for gated cycles, so that its pauses do not
	// hold the other workers' effects.
	gatedRun string
	lat      map[string][]time.Duration
}

// fail counts an error; the first one is printed at the end.
func (b *bencher) fail(err error) {
	if b.errors.Add(1) == 1 {
		b.firstErr.Store(err)
	}
}

func (w *benchWorker) loop(stop time.Time) {
	w.lat = map[string][]time.Duration{}
	rng := uint64(w.id)*0x9E3779B97F4A7C15 + 1
	ctx := context.Background()
	for time.Now().Before(stop) {
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		pick := int(rng % 100)
		run := w.b.runs[int(rng>>8)%len(w.b.runs)]
		start := time.Now()
		var name string
		var err error
		switch {
		case pick < w.b.mix.dup && len(w.done) > 0:
			name = "dup"
			k := w.done[int(rng>>16)%len(w.done)]
			err = w.expect(ctx, k, false, core.AnswerDuplicate)
		case pick < w.b.mix.dup+w.b.mix.gated:
			name = "gated"
			err = w.gated(ctx)
		default:
			name = "new"
			w.seq++
			key := fmt.Sprintf("%s/w%d-%d", run, w.id, w.seq)
			if err = w.expect(ctx, key, false, core.AnswerAdmit); err == nil {
				w.b.admissions.Add(1)
				if len(w.done) < 4096 {
					w.done = append(w.done, key)
				}
			}
		}
		if err != nil {
			w.b.fail(err)
			continue
		}
		w.lat[name] = append(w.lat[name], time.Since(start))
	}
}

// expect admits key (run/key encoded as "run/key") and checks the answer.
func (w *benchWorker) expect(ctx context.Context, runKey string, gated bool, want core.Answer) error {
	run, key, _ := strings.Cut(runKey, "/")
	w.b.requests.Add(1)
	res, err := w.c.Admit(ctx, run, key, 1, client.AdmitOptions{Gated: gated})
	if err != nil {
		return err
	}
	if res.Answer != want {
		return fmt.Errorf("admit %s/%s: answer %s, want %s", run, key, res.Answer, want)
	}
	return nil
}

// gated runs one approval cycle on the worker's own run: held, approved, admitted.
func (w *benchWorker) gated(ctx context.Context) error {
	if w.gatedRun == "" {
		run := fmt.Sprintf("%s-g%d", w.b.runs[0], w.id)
		if _, err := w.b.operator.Open(ctx, run, 0); err != nil {
			return err
		}
		w.gatedRun = run
	}
	w.seq++
	key := fmt.Sprintf("g%d", w.seq)
	if err := w.expect(ctx, w.gatedRun+"/"+key, true, core.AnswerHeld); err != nil {
		return err
	}
	w.b.requests.Add(1)
	if _, err := w.b.approver.Decide(ctx, w.gatedRun, key, core.Approve); err != nil {
		return err
	}
	if err := w.expect(ctx, w.gatedRun+"/"+key, false, core.AnswerAdmit); err != nil {
		return err
	}
	w.b.admissions.Add(1)
	return nil
}
