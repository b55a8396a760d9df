package crashcheck

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// Config is one harness run.
type Config struct {
	Binary        string        // the soundgate binary (servertest.Build, with the failpoints tag)
	Subcommand    string        // "serve" (default) or "serve-unsafe" (negative control)
	Dir           string        // working directory: data, roles file, socket, server logs
	Cycles        int           // kill-and-restart cycles
	Seed          uint64        // drives the workload, the kill times and the failpoints
	Clients       int           // concurrent agent connections
	KillAfterMax  time.Duration // a timed kill comes uniformly within (0, KillAfterMax] of load
	FailpointEach int           // every FailpointEach-th cycle arms a failpoint (0: never)
	SnapshotEvery int           // serve --snapshot-every (0: the server's default)
	ChecksMax     int           // facts re-checked per restart besides the last life's (sampled)
	ReadyTimeout  time.Duration // how long a restart may take before the run fails
	Logf          func(format string, args ...any)
}

// Result sums up a run. Violations lists every failed check, each naming its kind.
type Result struct {
	Cycles         int
	TimedKills     int // SIGKILL from the harness
	FailpointKills int // the server killed itself at an armed failpoint
	Acked          int // answers recorded as acknowledged facts
	Checked        int // facts re-checked after restarts
	AdmitAnswers   int // `admit` answers counted for P3
	Ready          []time.Duration
	Replay         []time.Duration
	Violations     []string
}

// Summary is the one-line summary of a run.
func (r Result) Summary(cfg Config) string {
	verdict := "ok"
	if len(r.Violations) > 0 {
		verdict = fmt.Sprintf("FAILED: %d violations", len(r.Violations))
	}
	return fmt.Sprintf("gate crash harness: %d kill-and-restart cycles (%d timed SIGKILL, %d at failpoints), %d acknowledged facts, %d re-checked, %d admit answers, lost %d (D1), double admissions %d (P3), rejected/cancelled revived %d (P2/P4), recovery p50 %s max %s (replay p50 %s), seed %d, %s",
		r.Cycles, r.TimedKills, r.FailpointKills, r.Acked, r.Checked, r.AdmitAnswers,
		r.count("D1"), r.count("P3"), r.count("P2")+r.count("P4"),
		pct(r.Ready, 0.5), pct(r.Ready, 1), pct(r.Replay, 0.5), cfg.Seed, verdict)
}

func (r Result) count(kind string) int {
	n := 0
	for _, v := range r.Violations {
		if strings.HasPrefix(v, kind+":") {
			n++
		}
	}
	return n
}

func pct(ds []time.Duration, p float64) string {
	if len(ds) == 0 {
		return "-"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))].Round(100 * time.Microsecond).String()
}

// effect is what the gate acknowledged about one (run, key).
type effect struct {
	admits    int          // `admit` answers over all lives (P3: at most 1)
	admitted  bool         // an `admit` answer or a duplicate was acknowledged
	completed core.Outcome // acknowledged completion, OutcomeNone if none
	rejected  bool         // an acknowledged reject covered it (it was held, gated)
	life      int          // the life that last recorded a fact about it
}

// run is what the gate acknowledged about one run.
type run struct {
	opened    bool
	cancelled bool // acknowledged cancel
	life      int
}

// history is the acknowledged facts; the oracle the checks compare with.
type history struct {
	mu      sync.Mutex
	runs    map[string]*run
	effects map[[2]string]*effect
	keys    map[string][]string // per run, the keys with facts, in order of first fact
	res     *Result
}

func (h *history) violate(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.res.Violations = append(h.res.Violations, fmt.Sprintf(format, args...))
}

func (h *history) eff(r, k string) *effect {
	e := h.effects[[2]string{r, k}]
	if e == nil {
		e = &effect{}
		h.effects[[2]string{r, k}] = e
	}
	return e
}

// before reads what was acknowledged about (r, k) before a request is sent: an admit
// answer is checked against the facts known when it was asked.
func (h *history) before(r, k string) (rejected, cancelled bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if e := h.effects[[2]string{r, k}]; e != nil {
		rejected = e.rejected
	}
	if run := h.runs[r]; run != nil {
		cancelled = run.cancelled
	}
	return rejected, cancelled
}

// noteAdmit records an acknowledged admit answer and checks P3 (every admit answer of
// every life counts), P2 and P4 (against the facts known before the request).
func (h *history) noteAdmit(r, k string, res core.Answer, wasRejected, wasCancelled bool, life int, load bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.eff(r, k)
	if e.life == 0 {
		h.keys[r] = append(h.keys[r], k)
	}
	if load || e.life == 0 {
		e.life = life // a check's re-ask is not a new fact to re-check next time
	}
	switch res {
	case core.AnswerAdmit:
		e.admits++
		h.res.AdmitAnswers++
		h.res.Acked++
		e.admitted = true
		if e.admits > 1 {
			h.res.Violations = append(h.res.Violations, fmt.Sprintf("P3: %s/%s answered admit %d times (life %d)", r, k, e.admits, life))
		}
		if wasRejected {
			h.res.Violations = append(h.res.Violations, fmt.Sprintf("P2: %s/%s was rejected and is now admitted (life %d)", r, k, life))
		}
		if wasCancelled {
			h.res.Violations = append(h.res.Violations, fmt.Sprintf("P4: %s was cancelled and admitted %s (life %d)", r, k, life))
		}
	case core.AnswerDuplicate:
		h.res.Acked++
		e.admitted = true
	}
}

// Run runs the harness. It returns an error when it cannot run (no binary, a gate
// that does not come back); violations are in Result.Violations.
func Run(cfg Config) (Result, error) {
	var res Result
	cfg = cfg.withDefaults()
	p, err := servertest.NewProcess(cfg.Binary, cfg.serveArgs(), cfg.Dir)
	if err != nil {
		return res, err
	}
	p.TCP = "" // the harness speaks over the Unix socket only
	rng := rand.New(rand.NewPCG(cfg.Seed, 0xc4a54))
	h := &history{runs: map[string]*run{}, effects: map[[2]string]*effect{}, keys: map[string][]string{}, res: &res}
	for life := 1; life <= cfg.Cycles; life++ {
		if err := runLife(h, p, rng, cfg, life); err != nil {
			return res, err
		}
		if life%max(1, cfg.Cycles/10) == 0 {
			cfg.Logf("crash: life %d/%d: %d facts, %d re-checked, recovery p50 %s, %d violations", life, cfg.Cycles, res.Acked, res.Checked, pct(res.Ready, 0.5), len(res.Violations))
		}
	}
	// A last start proves the final state recovers, and checks every fact.
	g := &gate{p: p}
	conns, err := g.start(cfg, "")
	if err != nil {
		return res, fmt.Errorf("crash: final restart failed: %v\n%s", err, g.logTail())
	}
	defer g.kill()
	cfg.ChecksMax = 1 << 30
	check(h, conns, rng, cfg, cfg.Cycles+1)
	for _, c := range conns.all() {
		c.Close()
	}
	return res, nil
}

// withDefaults fills in the zero fields of cfg that have a default.
func (cfg Config) withDefaults() Config {
	if cfg.Subcommand == "" {
		cfg.Subcommand = "serve"
	}
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 30 * time.Second
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return cfg
}

// serveArgs are the server's subcommand and flags.
func (cfg Config) serveArgs() []string {
	args := []string{cfg.Subcommand}
	if cfg.Subcommand == "serve" && cfg.SnapshotEvery > 0 {
		args = append(args, "--snapshot-every", fmt.Sprint(cfg.SnapshotEvery))
	}
	return args
}

// runLife starts the gate's next life (every cfg.FailpointEach-th with a failpoint
// armed), checks what earlier lives were told, then loads it until it dies.
func runLife(h *history, p *servertest.Process, rng *rand.Rand, cfg Config, life int) error {
	res := h.res
	fp := ""
	if cfg.FailpointEach > 0 && life%cfg.FailpointEach == 0 {
		fp = drawFailpoint(rng)
	}
	g := &gate{p: p}
	conns, err := g.start(cfg, fp)
	if err != nil {
		return fmt.Errorf("crash: life %d: the gate did not come back within %s: %v\n%s", life, cfg.ReadyTimeout, err, g.logTail())
	}
	res.Ready = append(res.Ready, p.StartTook())
	if d, ok := g.replayTime(); ok {
		res.Replay = append(res.Replay, d)
	}
	if life > 1 {
		check(h, conns, rng, cfg, life)
	}
	killAt := time.Duration(1 + rng.Int64N(int64(cfg.KillAfterMax)))
	if load(h, conns, g, rng.Uint64(), life, killAt, fp != "") {
		res.FailpointKills++
	} else {
		res.TimedKills++
	}
	for _, c := range conns.all() {
		c.Close()
	}
	res.Cycles++
	return nil
}

// drawFailpoint draws the failpoint a life arms: a log write or sync, at a random hit.
func drawFailpoint(rng *rand.Rand) string {
	name := "wal-after-write"
	if rng.IntN(2) == 1 {
		name = "wal-after-sync"
	}
	return fmt.Sprintf("%s:%d", name, 1+rng.IntN(failpointHitsMax))
}

// gate is one life of the server process.
type gate struct{ p *servertest.Process }

// start starts the next life with failpoint fp armed ("" for none) and connects an
// operator, an approver and cfg.Clients agents.
func (g *gate) start(cfg Config, fp string) (*conns, error) {
	g.p.Env = []string{"SOUNDGATE_FAILPOINT=" + fp} // wal.FailpointEnv, in builds with the failpoints tag
	ctx, cancel := context.WithTimeout(context.Background(), cfg.ReadyTimeout)
	defer cancel()
	if err := g.p.Start(ctx); err != nil {
		return nil, err
	}
	conns, err := g.dial(ctx, cfg.Clients)
	if err != nil {
		g.kill()
	}
	return conns, err
}

// conns are the connections of one life: agents, an approver and an operator.
type conns struct {
	agents   []*client.Client
	approver *client.Client
	operator *client.Client
}

func (c *conns) all() []*client.Client {
	return append(slices.Clone(c.agents), c.approver, c.operator)
}

func (g *gate) dial(ctx context.Context, agents int) (*conns, error) {
	addr := "unix:" + g.p.Unix
	var cs conns
	var err error
	if cs.operator, err = client.Dial(ctx, addr, servertest.OperatorToken); err != nil {
		return nil, err
	}
	if cs.approver, err = client.Dial(ctx, addr, servertest.ApproverToken); err != nil {
		return nil, err
	}
	for i := 0; i < agents; i++ {
		c, err := client.Dial(ctx, addr, servertest.AgentToken)
		if err != nil {
			return nil, err
		}
		cs.agents = append(cs.agents, c)
	}
	return &cs, nil
}

func (g *gate) kill() { g.p.Kill() }

var tookRe = regexp.MustCompile(`msg=recovered .*took=([0-9.]+[µmn]?s)`)

// replayTime reads the server's own "recovered ... took=" log line of this life.
func (g *gate) replayTime() (time.Duration, bool) {
	sc := bufio.NewScanner(strings.NewReader(g.p.Log()))
	for sc.Scan() {
		if m := tookRe.FindStringSubmatch(sc.Text()); m != nil {
			d, err := time.ParseDuration(m[1])
			return d, err == nil
		}
	}
	return 0, false
}

func (g *gate) logTail() string {
	b := g.p.Log()
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return b
}

const (
	// callTimeout bounds one request; the kill ends every request of a life anyway.
	callTimeout = 5 * time.Second
	// failpointHitsMax: an armed failpoint fires at a hit drawn from 1..this (a hit
	// is one batch written, or one batch synced).
	failpointHitsMax = 20
	// failpointWait is how long an armed life runs on before a timed SIGKILL.
	failpointWait = 3 * time.Second
)

// load runs the workload until the gate dies: killed by the harness after killAt, or
// by itself at an armed failpoint. It reports whether the gate killed itself.
func load(h *history, cs *conns, g *gate, seed uint64, life int, killAt time.Duration, armed bool) (self bool) {
	rng := rand.New(rand.NewPCG(seed, 1))
	// Open a few new runs for this life.
	var runs []string
	for i := 0; i < 3; i++ {
		r := fmt.Sprintf("L%d-r%d", life, i)
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		_, err := cs.operator.Open(ctx, r, 0)
		cancel()
		if err == nil {
			h.mu.Lock()
			h.runs[r] = &run{opened: true, life: life}
			h.res.Acked++
			h.mu.Unlock()
			runs = append(runs, r)
		}
	}
	if len(runs) == 0 {
		// The gate died before opening anything (a failpoint fires early).
		g.p.Reap()
		return armed
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i, c := range cs.agents {
		wg.Add(1)
		wrng := rand.New(rand.NewPCG(rng.Uint64(), uint64(i)))
		go func() {
			defer wg.Done()
			agentLoop(h, c, cs.approver, cs.operator, runs, wrng, life, i, stop)
		}()
	}
	timer := time.NewTimer(killAt)
	exited := g.p.Exited()
	select {
	case <-exited:
		self = true
	case <-timer.C:
		if armed {
			// Give an armed failpoint time to fire before falling back to SIGKILL.
			select {
			case <-exited:
				self = true
			case <-time.After(failpointWait):
			}
		}
	}
	timer.Stop()
	if self {
		g.p.Reap()
	} else {
		g.kill()
	}
	close(stop)
	wg.Wait()
	return self
}

// agentLoop sends one agent's random requests to runs until stop is closed or the
// gate is gone, recording every acknowledged answer in h.
func agentLoop(h *history, c, approver, operator *client.Client, runs []string, rng *rand.Rand, life, id int, stop chan struct{}) {
	bg := context.Background()
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		r := runs[rng.IntN(len(runs))]
		ctx, cancel := context.WithTimeout(bg, callTimeout)
		var err error
		switch p := rng.IntN(100); {
		case p < 55: // admit a new key
			err = h.admit(ctx, c, r, fmt.Sprintf("a%d-%d", id, n), false, life, true)
		case p < 70: // re-admit a known key (a duplicate, a retry)
			if k, ok := h.pick(r, rng, false); ok {
				err = h.admit(ctx, c, r, k, false, life, true)
			}
		case p < 82: // complete an admitted key
			if k, ok := h.pick(r, rng, true); ok {
				err = h.complete(ctx, c, r, k, rng, life)
			}
		case p < 97: // a gated effect: held, then approved or rejected
			err = h.gatedEffect(ctx, c, approver, r, fmt.Sprintf("g%d-%d", id, n), rng, life)
		default: // cancel the run (rarely: a cancelled run admits nothing more)
			if rng.IntN(4) == 0 {
				err = h.cancelRun(ctx, operator, r)
			}
		}
		cancel()
		if err != nil && isDead(err) {
			return
		}
	}
}

// complete completes r/k, OK or (one in four) failed, and records the acknowledged
// completion.
func (h *history) complete(ctx context.Context, c *client.Client, r, k string, rng *rand.Rand, life int) error {
	o := core.OutcomeOK
	if rng.IntN(4) == 0 {
		o = core.OutcomeFailed
	}
	if _, err := c.Complete(ctx, r, k, o, "done"); err != nil {
		return err
	}
	h.mu.Lock()
	if e := h.eff(r, k); e.completed == core.OutcomeNone {
		e.completed, e.life = o, life
	}
	h.res.Acked++
	h.mu.Unlock()
	return nil
}

// gatedEffect admits a new gated effect r/k, which must be held, then approves or
// (one in three) rejects it, recording an acknowledged rejection.
func (h *history) gatedEffect(ctx context.Context, c, approver *client.Client, r, k string, rng *rand.Rand, life int) error {
	res, err := c.Admit(ctx, r, k, 1, client.AdmitOptions{Gated: true})
	if err == nil && res.Answer == core.AnswerAdmit {
		h.violate("P3: %s/%s: a new gated effect was admitted without approval (life %d)", r, k, life)
	}
	if err != nil || res.Answer != core.AnswerHeld {
		return err
	}
	d := core.Approve
	if rng.IntN(3) == 0 {
		d = core.Reject
	}
	if _, err = approver.Decide(ctx, r, k, d); err == nil && d == core.Reject {
		h.mu.Lock()
		e := h.eff(r, k)
		if e.life == 0 {
			h.keys[r] = append(h.keys[r], k)
		}
		e.rejected, e.life = true, life
		h.res.Acked++
		h.mu.Unlock()
	}
	return err
}

// cancelRun cancels run r and records the acknowledged cancel.
func (h *history) cancelRun(ctx context.Context, operator *client.Client, r string) error {
	if _, err := operator.Cancel(ctx, r); err != nil {
		return err
	}
	h.mu.Lock()
	h.runs[r].cancelled = true
	h.res.Acked++
	h.mu.Unlock()
	return nil
}

// admit sends one admit and records its answer; load says whether it is the load's
// (a new fact) or a check's re-ask.
func (h *history) admit(ctx context.Context, c *client.Client, r, k string, gated bool, life int, load bool) error {
	wasRejected, wasCancelled := h.before(r, k)
	res, err := c.Admit(ctx, r, k, 1, client.AdmitOptions{Gated: gated})
	if err == nil {
		h.noteAdmit(r, k, res.Answer, wasRejected, wasCancelled, life, load)
	}
	return err
}

// pick returns a random key of run r with a fact (admitted only, if asked).
func (h *history) pick(r string, rng *rand.Rand, admitted bool) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ks := h.keys[r]
	for try := 0; try < 4 && len(ks) > 0; try++ {
		k := ks[rng.IntN(len(ks))]
		if !admitted || h.effects[[2]string{r, k}].admitted {
			return k, true
		}
	}
	return "", false
}

func isDead(err error) bool {
	return errors.Is(err, client.ErrClosed) || errors.Is(err, context.DeadlineExceeded)
}

// fact is what was acknowledged about one effect, copied for a check.
type fact struct {
	r, k string
	e    effect
}

// check re-reads, after a restart, the facts of the last life and a sample of older
// ones (cfg.ChecksMax), and re-asks admits: D1, P2, P3 (through noteAdmit), P4.
func check(h *history, cs *conns, rng *rand.Rand, cfg Config, life int) {
	runs, runFacts, facts := h.toCheck(rng, cfg, life)
	checked := h.checkRuns(cs, runs, runFacts, cfg, life)
	checked += h.checkEffects(cs, facts, life)
	h.mu.Lock()
	h.res.Checked += checked
	h.mu.Unlock()
}

// toCheck copies the facts a check re-reads: every run (shuffled) with its facts, and
// the effects of the last life followed by a shuffled sample of cfg.ChecksMax older
// ones.
func (h *history) toCheck(rng *rand.Rand, cfg Config, life int) ([]string, map[string]run, []fact) {
	h.mu.Lock()
	var runs []string
	for r := range h.runs {
		runs = append(runs, r)
	}
	var recent, older []fact
	for key, e := range h.effects {
		f := fact{key[0], key[1], *e}
		if e.life == life-1 {
			recent = append(recent, f)
		} else {
			older = append(older, f)
		}
	}
	runFacts := map[string]run{}
	for r, x := range h.runs {
		runFacts[r] = *x
	}
	h.mu.Unlock()
	slices.Sort(runs)
	slices.SortFunc(older, func(a, b fact) int { return strings.Compare(a.r+"/"+a.k, b.r+"/"+b.k) })
	rng.Shuffle(len(older), func(i, j int) { older[i], older[j] = older[j], older[i] })
	facts := append(recent, older[:min(len(older), cfg.ChecksMax)]...)
	rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	return runs, runFacts, facts
}

// checkRuns reads the status of the runs of the last life and of up to
// cfg.ChecksMax/4 older ones (D1, P4), and re-asks an admit in every cancelled run
// (P4); it returns the statuses read.
func (h *history) checkRuns(cs *conns, runs []string, runFacts map[string]run, cfg Config, life int) int {
	bg := context.Background()
	checked, olderRuns := 0, 0
	for _, r := range runs {
		x := runFacts[r]
		if x.life != life-1 {
			if olderRuns >= cfg.ChecksMax/4 {
				continue
			}
			olderRuns++
		}
		ctx, cancel := context.WithTimeout(bg, callTimeout)
		st, err := cs.operator.Status(ctx, r, "")
		cancel()
		checked++
		switch {
		case err != nil:
			h.violate("D1: %s: status after restart: %v (life %d)", r, err, life)
		case st.Status == core.RunNone:
			h.violate("D1: run %s was opened (acknowledged) and is unknown after restart (life %d)", r, life)
		case x.cancelled && st.Status != core.RunCancelled:
			h.violate("P4: run %s was cancelled (acknowledged) and is %s after restart (life %d)", r, st.Status, life)
		}
		if x.cancelled {
			ctx, cancel := context.WithTimeout(bg, callTimeout)
			err := h.admit(ctx, cs.agents[0], r, fmt.Sprintf("after-cancel-%d", life), false, life, false)
			cancel()
			if err != nil {
				h.violate("P4: %s: admit after restart: %v", r, err)
			}
		}
	}
	return checked
}

// checkEffects reads the status of each fact's effect (D1, P2) and re-asks the admit
// of every admitted or rejected one (P3, P2); it returns the statuses read.
func (h *history) checkEffects(cs *conns, facts []fact, life int) int {
	bg := context.Background()
	checked := 0
	for _, f := range facts {
		ctx, cancel := context.WithTimeout(bg, callTimeout)
		st, err := cs.operator.Status(ctx, f.r, f.k)
		cancel()
		checked++
		if err != nil || st.Effect == nil {
			h.violate("D1: %s/%s: status after restart: %v (life %d)", f.r, f.k, err, life)
			continue
		}
		got := st.Effect.Status
		switch {
		case f.e.rejected && got != core.EffectRejected:
			h.violate("P2: %s/%s was rejected (acknowledged) and is %s after restart (life %d)", f.r, f.k, got, life)
		case f.e.completed != core.OutcomeNone && (got != core.EffectCompleted || st.Effect.Outcome != f.e.completed):
			h.violate("D1: %s/%s completed %s (acknowledged) and is %s/%s after restart (life %d)", f.r, f.k, f.e.completed, got, st.Effect.Outcome, life)
		case f.e.admitted && got != core.EffectAdmitted && got != core.EffectCompleted:
			h.violate("D1: %s/%s was admitted (acknowledged) and is %s after restart (life %d)", f.r, f.k, got, life)
		}
		if f.e.admitted || f.e.rejected {
			// Ask again: an admitted effect must not be admitted twice (P3), a
			// rejected one never (P2).
			ctx, cancel := context.WithTimeout(bg, callTimeout)
			err := h.admit(ctx, cs.agents[0], f.r, f.k, false, life, false)
			cancel()
			if err != nil {
				h.violate("D1: %s/%s: admit after restart: %v (life %d)", f.r, f.k, err, life)
			}
		}
	}
	return checked
}
