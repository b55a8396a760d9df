package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
)

// lifecycleOptions are the flags of the lifecycle load (--effects > 0): runs that
// come and go, as an agent fleet's do, for the retention benchmark.
type lifecycleOptions struct {
	effects, perRun int64
	rate            float64 // effects per second; 0: as fast as the gate answers
	gatePID         int
	data            string
	sample          time.Duration
}

// pacer spaces the effects of every worker at a steady rate: each takes the next
// slot, and waits for it.
type pacer struct {
	mu    sync.Mutex
	next  time.Time
	every time.Duration
}

func (p *pacer) wait() {
	if p == nil {
		return
	}
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	at := p.next
	p.next = p.next.Add(p.every)
	p.mu.Unlock()
	time.Sleep(time.Until(at))
}

// lifecycleMain opens new runs without end, admits and completes perRun new keys on
// each (so that each run is finished once its last key completes), until effects are
// admitted. Every sample it prints the effects and runs so far and, when it is given
// the gate's pid and data directory, the gate's resident size and the directory's
// bytes: what the retention benchmark watches stay flat.
func lifecycleMain(o benchOptions) int {
	ctx := context.Background()
	conns := make([]*client.Client, 0, o.clients)
	for range o.clients {
		ag, err := client.Dial(ctx, o.addr, o.agent)
		if err != nil {
			return fail(exitFailure, "%v", err)
		}
		defer ag.Close()
		conns = append(conns, ag)
	}
	op, err := client.Dial(ctx, o.addr, o.operator)
	if err != nil {
		return fail(exitFailure, "%v", err)
	}
	defer op.Close()

	var effects, runs, seq atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	stop := make(chan struct{})
	start := time.Now()
	var pace *pacer
	if o.life.rate > 0 {
		pace = &pacer{every: time.Duration(float64(time.Second) / o.life.rate)}
	}
	for w := range o.clients * o.depth {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ag := conns[w%len(conns)]
			for effects.Load() < o.life.effects {
				// ids ordered in time, as serve --ordered-ids needs: each open takes the next
				run := fmt.Sprintf("%s-%012d", o.prefix, seq.Add(1))
				if err := lifecycleRun(ctx, op, ag, run, o.life.perRun, &effects, pace); err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				runs.Add(1)
			}
		}()
	}
	go func() { wg.Wait(); close(stop) }()
	t := time.NewTicker(o.life.sample)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		case <-t.C:
		}
		fmt.Println(lifecycleSample(o.life, time.Since(start), effects.Load(), runs.Load()))
	}
	if err, _ := firstErr.Load().(error); err != nil {
		return fail(exitFailure, "%v", err)
	}
	return exitOK
}

// lifecycleRun opens run, then admits and completes perRun new keys on it.
func lifecycleRun(ctx context.Context, op, ag *client.Client, run string, perRun int64, effects *atomic.Int64, pace *pacer) error {
	r, err := op.Open(ctx, run, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", run, err)
	}
	for k := range perRun {
		pace.wait()
		key := strconv.FormatInt(k, 10)
		a, err := ag.Admit(ctx, run, key, r.Epoch, client.AdmitOptions{})
		if err != nil || a.Answer != core.AnswerAdmit {
			return fmt.Errorf("admit %s %s: %v %v", run, key, a.Answer, err)
		}
		if _, err := ag.Complete(ctx, run, key, core.OutcomeOK, "done"); err != nil {
			return fmt.Errorf("complete %s %s: %w", run, key, err)
		}
		effects.Add(1)
	}
	return nil
}

// lifecycleSample is one line of the lifecycle load's progress.
func lifecycleSample(o lifecycleOptions, at time.Duration, effects, runs int64) string {
	line := fmt.Sprintf("lifecycle: t=%.0fs effects=%d runs=%d", at.Seconds(), effects, runs)
	if o.gatePID > 0 {
		line += " rss_kib=" + procField(o.gatePID, "VmRSS:")
	}
	if o.data != "" {
		line += fmt.Sprintf(" data_bytes=%d", dirBytes(o.data))
	}
	return line
}

// procField reads one field of /proc/PID/status, in kB; "?" if it cannot.
func procField(pid int, name string) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == name {
			return f[1]
		}
	}
	return "?"
}

// dirBytes is the size of the files directly in dir.
func dirBytes(dir string) int64 {
	var n int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(dir, e.Name())); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	return n
}
