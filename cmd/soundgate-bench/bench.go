package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	shares := map[string]*int{"new": &m.fresh, "dup": &m.dup, "gated": &m.gated}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(part, "=")
		n, err := strconv.Atoi(val)
		if !ok || err != nil || n < 0 {
			return m, fmt.Errorf("bad mix element %q (want name=percent)", part)
		}
		share, known := shares[name]
		if !known {
			return m, fmt.Errorf("unknown operation %q in the mix (new, dup, gated)", name)
		}
		*share = n
	}
	if m.fresh+m.dup+m.gated != 100 {
		return m, errors.New("the mix must add up to 100")
	}
	return m, nil
}

// benchOptions are the bench's flags.
type benchOptions struct {
	addr, agent, operator, approver string
	clients, depth, runs            int
	duration                        time.Duration
	prefix, mixFlag, driver         string
	mix                             benchMix
	quiet, goroutines               bool
	life                            lifecycleOptions
}

// benchLoop is one closed loop of the load (a connection, a worker, or the event loop
// of every raw connection): it runs until stop and returns its latencies by operation.
type benchLoop func(stop time.Time) map[string][]time.Duration

func benchMain(args []string) int {
	o, code, ok := parseBenchFlags(args)
	if !ok {
		return code
	}
	if o.life.effects > 0 {
		return lifecycleMain(o)
	}
	ctx := context.Background()
	op, err := client.Dial(ctx, o.addr, o.operator)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer op.Close()
	runIDs, err := openRuns(ctx, op, o.prefix, o.runs)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	var ap *client.Client
	if o.mix.gated > 0 {
		if ap, err = client.Dial(ctx, o.addr, o.approver); err != nil {
			return fail(exitFailure, "%v", err)
		}
		defer ap.Close()
	}
	b := &bencher{mix: o.mix, runs: runIDs, operator: op, approver: ap}
	var closers []io.Closer
	defer func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i].Close()
		}
	}()
	var loops []benchLoop
	if o.driver == "raw" {
		loops, err = rawLoops(ctx, b, o, &closers)
	} else {
		loops, err = clientLoops(ctx, b, o, &closers)
	}
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	fmt.Printf("bench: %s, %d clients x pipeline %d, %d runs, mix %s, driver %s, %s\n", o.addr, o.clients, o.depth, o.runs, o.mixFlag, o.driver, o.duration)
	lat, elapsed := runLoops(b, loops, o.duration, o.quiet)
	return printFigures(b, lat, elapsed)
}

// benchTokens are the files named by the --*-token-file flags.
type benchTokens struct{ agent, operator, approver string }

// parseBenchFlags parses and checks args; with ok false the bench exits with code.
func parseBenchFlags(args []string) (o benchOptions, code int, ok bool) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&o.addr, "addr", envOr("SOUNDGATE_ADDR", "127.0.0.1:7433"), "gate address: host:port or unix:/path")
	var files benchTokens
	for _, t := range []struct {
		flag, env, what string
		value, file     *string
	}{
		{"token", "SOUNDGATE_TOKEN", "agent token (its scope must cover the bench runs)", &o.agent, &files.agent},
		{"operator-token", "SOUNDGATE_OPERATOR_TOKEN", "operator token, to open the bench runs", &o.operator, &files.operator},
		{"approver-token", "SOUNDGATE_APPROVER_TOKEN", "approver token, for gated operations", &o.approver, &files.approver},
	} {
		fs.StringVar(t.value, t.flag, "", t.what+" (env "+t.env+"; other local users see it in ps: prefer --"+t.flag+"-file)")
		fs.StringVar(t.file, t.flag+"-file", "", "file holding the "+t.what+" (env "+t.env+"_FILE)")
	}
	fs.IntVar(&o.clients, "clients", 16, "connections, each with its own closed loop(s)")
	fs.IntVar(&o.depth, "pipeline", 1, "requests in flight per connection (pipelining depth)")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "how long to run")
	fs.IntVar(&o.runs, "runs", 64, "runs the load is spread over")
	fs.StringVar(&o.prefix, "run-prefix", "bench-"+strconv.FormatInt(time.Now().UnixNano(), 36), "prefix of the bench run ids")
	fs.StringVar(&o.mixFlag, "mix", "new=100", "operation mix in percent: new (admit a new key), dup (re-admit: duplicate), gated (held, approved, admitted)")
	fs.BoolVar(&o.quiet, "q", false, "no progress lines")
	fs.Int64Var(&o.life.effects, "effects", 0, "lifecycle load: open new runs, admit and complete --effects-per-run new keys on each, until this many effects (0: the admission load)")
	fs.Int64Var(&o.life.perRun, "effects-per-run", 10, "lifecycle load: effects of each run")
	fs.Float64Var(&o.life.rate, "rate", 0, "lifecycle load: effects per second, spread over every worker (0: as fast as the gate answers)")
	fs.IntVar(&o.life.gatePID, "gate-pid", 0, "lifecycle load: the gate's pid, to print its resident size with each sample")
	fs.StringVar(&o.life.data, "data", "", "lifecycle load: the gate's data directory, to print its bytes with each sample")
	fs.DurationVar(&o.life.sample, "sample", 10*time.Second, "lifecycle load: how often to print a sample")
	fs.BoolVar(&o.goroutines, "raw-goroutines", false, "with --driver raw: a goroutine per connection instead of one event loop (Linux epoll, the default there)")
	fs.StringVar(&o.driver, "driver", "", "how connections are driven: raw (the wire protocol, a window of pipelined requests per connection, like redis-benchmark) or client (the Go client library, a goroutine per request in flight); default raw, client for a mix with gated operations")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: soundgate-bench [flags]\n\nDrives a running gate with closed-loop load and prints admissions/s and latency\npercentiles (p50/p99/p999) per operation, with a progress line every second.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, exitOK, false
		}
		return o, exitUsage, false
	}
	var err error
	for _, t := range []struct {
		value *string
		file  string
		env   string
	}{{&o.agent, files.agent, "SOUNDGATE_TOKEN"}, {&o.operator, files.operator, "SOUNDGATE_OPERATOR_TOKEN"}, {&o.approver, files.approver, "SOUNDGATE_APPROVER_TOKEN"}} {
		if *t.value, err = client.Token(*t.value, t.file, t.env); err != nil {
			return o, fail(exitUsage, "%v", err), false
		}
	}
	if o.life.effects > 0 && (o.life.perRun < 1 || o.life.sample <= 0 || o.life.rate < 0) {
		return o, fail(exitUsage, "--effects-per-run must be at least 1, --sample positive and --rate not negative"), false
	}
	if o.mix, err = parseMix(o.mixFlag); err != nil {
		return o, fail(exitUsage, "--mix: %v", err), false
	}
	if err := o.check(); err != nil {
		return o, fail(exitUsage, "%v", err), false
	}
	return o, 0, true
}

// check checks the flags against each other and picks the default driver: raw, or
// client for a mix with gated operations.
func (o *benchOptions) check() error {
	switch {
	case o.agent == "" || o.operator == "":
		return errors.New("bench needs an agent's and an operator's token (--token-file and --operator-token-file, or the flags and variables in -h)")
	case o.mix.gated > 0 && o.approver == "":
		return errors.New("a mix with gated operations needs --approver-token")
	case o.clients < 1 || o.depth < 1 || o.runs < 1:
		return errors.New("--clients, --pipeline and --runs must be at least 1")
	}
	switch {
	case o.driver == "" && o.mix.gated > 0:
		o.driver = "client"
	case o.driver == "":
		o.driver = "raw"
	case o.driver == "raw" && o.mix.gated > 0:
		return errors.New("--driver raw does not do gated operations (they need an approver connection): use --driver client")
	case o.driver != "raw" && o.driver != "client":
		return fmt.Errorf("--driver: unknown driver %q (raw, client)", o.driver)
	}
	if o.goroutines && o.driver != "raw" {
		return errors.New("--raw-goroutines applies to --driver raw only (the client driver has a goroutine per request)")
	}
	return nil
}

// openRuns opens the n bench runs, prefix-0 to prefix-(n-1).
func openRuns(ctx context.Context, op *client.Client, prefix string, n int) ([]string, error) {
	runIDs := make([]string, n)
	for i := range runIDs {
		runIDs[i] = fmt.Sprintf("%s-%d", prefix, i)
		if _, err := op.Open(ctx, runIDs[i], 0); err != nil {
			return nil, fmt.Errorf("open %s: %v", runIDs[i], err)
		}
	}
	return runIDs, nil
}

// rawLoops dials o.clients raw connections (added to closers) and returns their
// loops: one event loop for them all where the platform has one, else one each.
func rawLoops(ctx context.Context, b *bencher, o benchOptions, closers *[]io.Closer) ([]benchLoop, error) {
	var ds []*rawDriver
	for i := 0; i < o.clients; i++ {
		nc, rd, err := dialRaw(ctx, o.addr, o.agent)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %v", i, err)
		}
		*closers = append(*closers, nc)
		ds = append(ds, &rawDriver{b: b, nc: nc, rd: rd, id: i, depth: o.depth, rng: uint64(i)*0x9E3779B97F4A7C15 + 1})
	}
	if rawLoopAvailable && !o.goroutines {
		return []benchLoop{func(stop time.Time) map[string][]time.Duration {
			lat, err := rawLoop(ds, stop)
			if err != nil {
				b.fail(err)
			}
			return lat
		}}, nil
	}
	var loops []benchLoop
	for _, d := range ds {
		loops = append(loops, func(stop time.Time) map[string][]time.Duration { d.loop(stop); return d.lat })
	}
	return loops, nil
}

// clientLoops dials o.clients client connections (added to closers) and returns a
// worker's loop for each request in flight: o.depth per connection.
func clientLoops(ctx context.Context, b *bencher, o benchOptions, closers *[]io.Closer) ([]benchLoop, error) {
	conns := make([]*client.Client, o.clients)
	for i := range conns {
		c, err := client.Dial(ctx, o.addr, o.agent)
		if err != nil {
			return nil, fmt.Errorf("connection %d: %v", i, err)
		}
		conns[i] = c
		*closers = append(*closers, c)
	}
	var loops []benchLoop
	for i := 0; i < o.clients*o.depth; i++ {
		w := &benchWorker{b: b, c: conns[i%o.clients], id: i}
		loops = append(loops, func(stop time.Time) map[string][]time.Duration { w.loop(stop); return w.lat })
	}
	return loops, nil
}

// runLoops runs every loop for duration, printing the admissions of each second
// (unless quiet), and returns their latencies merged and the time they took.
func runLoops(b *bencher, loops []benchLoop, duration time.Duration, quiet bool) (map[string][]time.Duration, time.Duration) {
	stop := time.Now().Add(duration)
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
			if !quiet {
				fmt.Printf("  %4.0fs  %8d admissions/s  (%d errors)\n", time.Since(start).Seconds(), n-last, b.errors.Load())
			}
			last = n
		}
	}
	elapsed := time.Since(start)
	lat := map[string][]time.Duration{}
	for _, l := range lats {
		addLatencies(lat, l)
	}
	return lat, elapsed
}

// addLatencies appends src's latencies to dst's, operation by operation.
func addLatencies(dst, src map[string][]time.Duration) {
	for k, v := range src {
		dst[k] = append(dst[k], v...)
	}
}

// printFigures prints the admissions per second and the latency percentiles of each
// operation; it returns exitFailure if any request failed.
func printFigures(b *bencher, lat map[string][]time.Duration, elapsed time.Duration) int {
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
