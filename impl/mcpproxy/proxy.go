package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/soundgate/soundgate/impl/attempt"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// Defaults of Config.
const (
	// DefaultMaxHold bounds how long a held call stays open waiting for a decision.
	DefaultMaxHold = 10 * time.Minute
	// DefaultProgressEvery is how often a held call tells the host it is still alive
	// (notifications/progress), and how long one ask waits on the gate.
	DefaultProgressEvery = 5 * time.Second
	// gateCallTimeout bounds one gate request beyond the time it may wait.
	gateCallTimeout = 10 * time.Second
)

// ArgsBytesMax bounds a call's arguments: they are parsed whole to derive the key.
const ArgsBytesMax = 4 << 20

// Config configures a Proxy.
type Config struct {
	// Server names the upstream in the policy and in every derived key. It comes from
	// the host's configuration (soundgate mcp-proxy --server), never from the upstream,
	// which could otherwise claim a trusted server's name.
	Server string
	// Run is the run of calls whose _meta names none ("": such calls are refused).
	Run string
	// Policy decides which tools are gated (nil: every tool).
	Policy *Policy
	// Gate is an agent's connection to the gate.
	Gate Conn
	// Redial, if set, replaces Gate when Closed says the gate closed it.
	Redial func(ctx context.Context) (Conn, error)
	Closed func(error) bool
	// MaxHold bounds how long a held call waits for a decision (0: DefaultMaxHold).
	MaxHold time.Duration
	// ProgressEvery is the interval of progress notifications of a held call (0:
	// DefaultProgressEvery).
	ProgressEvery time.Duration
	// Deferred answers a held call at once with a "pending approval" tool error
	// instead of keeping it open, for hosts whose request timeouts are short.
	Deferred bool
	// Logger receives what the host is not told (nil: discarded).
	Logger *slog.Logger
	// Version is this proxy's version, as the host sees it in initialize.
	Version string
}

// Proxy is an MCP server to a host and an MCP client of one upstream, that asks the
// gate before every tools/call it forwards.
type Proxy struct {
	cfg   Config
	gate  *gate
	log   *slog.Logger
	order *arrivals // the host's order of tools/calls (HostTransport numbers them)

	mu    sync.Mutex
	up    *mcp.ClientSession
	srv   *mcp.Server
	tools map[string]*mcp.Tool // the upstream's, as last listed
	dead  error                // why the upstream is gone, once it is

	bg sync.WaitGroup // asks still in flight for calls the host gave up on
}

// New returns a Proxy for cfg.
func New(cfg Config) (*Proxy, error) {
	if cfg.Server == "" {
		return nil, errors.New("soundgate/mcpproxy: no server name")
	}
	if cfg.Gate == nil {
		return nil, errors.New("soundgate/mcpproxy: no gate connection")
	}
	if cfg.Policy == nil {
		cfg.Policy = &Policy{}
	}
	if cfg.MaxHold <= 0 {
		cfg.MaxHold = DefaultMaxHold
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = DefaultProgressEvery
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Proxy{cfg: cfg, log: log, gate: &gate{at: attempt.New(cfg.Gate, cfg.Redial, cfg.Closed, epochsMax)},
		tools: map[string]*mcp.Tool{}, order: newArrivals()}, nil
}

// ErrUpstream is wrapped by Run's errors about the upstream server.
var ErrUpstream = errors.New("soundgate/mcpproxy: upstream")

// Run learns the epoch of Config.Run, connects to the upstream, lists its tools and
// serves the host until the host disconnects or ctx ends; then it lets the asks of
// abandoned calls finish, closes the upstream (which ends its process) and the gate
// connection.
func (p *Proxy) Run(ctx context.Context, host, upstream mcp.Transport) error {
	err := p.run(ctx, upstream, func(srv *mcp.Server) error { return srv.Run(ctx, host) })
	if err != nil && !errors.Is(err, context.Canceled) && !isEOF(err) {
		return err
	}
	return nil
}

// run connects to the upstream, builds the server the host sees and serves it with
// serve; then it lets the asks of abandoned calls finish and closes the upstream and
// the gate connection.
func (p *Proxy) run(ctx context.Context, upstream mcp.Transport, serve func(*mcp.Server) error) error {
	defer p.gate.close()
	if p.cfg.Run != "" {
		// The attempt begins now, not at the first call: a Fence from here on must deny
		// this proxy's calls, even one that comes before the proxy's first call.
		gctx, cancel := context.WithTimeout(ctx, gateCallTimeout)
		_, err := p.gate.epoch(gctx, p.cfg.Run)
		cancel()
		if err != nil {
			return fmt.Errorf("soundgate/mcpproxy: the epoch of run %q: %w", p.cfg.Run, err)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "soundgate-mcp-proxy", Version: p.cfg.Version},
		&mcp.ClientOptions{ToolListChangedHandler: func(ctx context.Context, _ *mcp.ToolListChangedRequest) { p.refreshTools(ctx) }})
	up, err := client.Connect(ctx, upstream, nil)
	if err != nil {
		return fmt.Errorf("%w: connect: %v", ErrUpstream, err)
	}
	defer up.Close()
	go func() {
		err := up.Wait()
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.dead == nil {
			p.dead = fmt.Errorf("the upstream MCP server %q exited (%v)", p.cfg.Server, errOrEOF(err))
			p.log.Error("upstream gone", "server", p.cfg.Server, "err", err)
		}
	}()
	init := up.InitializeResult()
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if init != nil && init.Capabilities != nil {
		if init.Capabilities.Resources != nil {
			caps.Resources = &mcp.ResourceCapabilities{} // no subscriptions, no list changes (not forwarded)
		}
		if init.Capabilities.Prompts != nil {
			caps.Prompts = &mcp.PromptCapabilities{}
		}
		if init.Capabilities.Completions != nil {
			caps.Completions = &mcp.CompletionCapabilities{}
		}
	}
	opts := &mcp.ServerOptions{Capabilities: caps}
	if init != nil {
		opts.Instructions = init.Instructions
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "soundgate-mcp-proxy/" + p.cfg.Server, Version: p.cfg.Version}, opts)
	srv.AddReceivingMiddleware(p.forward)
	p.mu.Lock()
	p.up, p.srv = up, srv
	p.mu.Unlock()
	if err := p.refreshTools(ctx); err != nil {
		return fmt.Errorf("%w: list its tools: %v", ErrUpstream, err)
	}
	if err := p.checkPolicy(); err != nil {
		return err
	}
	err = serve(srv)
	p.bg.Wait()
	if err != nil {
		return fmt.Errorf("soundgate/mcpproxy: serve the host: %w", err)
	}
	return nil
}

// isEOF reports whether err is the host's end of stream, a clean end of the session.
func isEOF(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrClosedPipe) || errors.Is(err, mcp.ErrConnectionClosed)
}

func errOrEOF(err error) string {
	if err == nil {
		return "end of stream"
	}
	return err.Error()
}

// refreshTools lists the upstream's tools and re-exposes them unchanged: new and
// changed ones added, gone ones removed (the SDK then tells the host,
// notifications/tools/list_changed). A tool whose input schema is not an object cannot
// be exposed through the SDK: it is left out and logged.
func (p *Proxy) refreshTools(ctx context.Context) error {
	p.mu.Lock()
	up, srv := p.up, p.srv
	p.mu.Unlock()
	if up == nil || srv == nil {
		return nil // a change notified before the proxy serves: the first listing sees it
	}
	listed := map[string]*mcp.Tool{}
	for t, err := range up.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		listed[t.Name] = t
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var gone []string
	for name := range p.tools {
		if _, ok := listed[name]; !ok {
			gone = append(gone, name)
			delete(p.tools, name)
		}
	}
	if len(gone) > 0 {
		srv.RemoveTools(gone...)
	}
	for name, t := range listed {
		if old, ok := p.tools[name]; ok && sameJSON(old, t) {
			continue
		}
		if m, ok := t.InputSchema.(map[string]any); !ok || m["type"] != "object" {
			p.log.Error("tool left out: its input schema is not of type object", "server", p.cfg.Server, "tool", name)
			continue
		}
		p.tools[name] = t
		srv.AddTool(t, p.callTool)
	}
	return nil
}

// checkPolicy holds the policy to the tools the upstream has (Policy.CheckTools), and
// logs when the policy does not name this server at all: likely a missing --server,
// which leaves every tool gated.
func (p *Proxy) checkPolicy() error {
	p.mu.Lock()
	names := make([]string, 0, len(p.tools))
	for n := range p.tools {
		names = append(names, n)
	}
	p.mu.Unlock()
	if _, ok := p.cfg.Policy.Servers[p.cfg.Server]; !ok && len(p.cfg.Policy.Servers) > 0 {
		p.log.Warn("the policy does not name this server: every tool is gated (is --server right?)", "server", p.cfg.Server)
	}
	return p.cfg.Policy.CheckTools(p.cfg.Server, names)
}

func sameJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// forward passes the host's resource, prompt and completion requests to the upstream
// unchanged: they are reads in MCP, not effects, and are not asked of the gate
// (docs/integrations/mcp.md says what that leaves unseen).
func (p *Proxy) forward(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p.mu.Lock()
		up := p.up
		p.mu.Unlock()
		switch params := req.GetParams().(type) {
		case *mcp.ListResourcesParams:
			return up.ListResources(ctx, params)
		case *mcp.ListResourceTemplatesParams:
			return up.ListResourceTemplates(ctx, params)
		case *mcp.ReadResourceParams:
			return up.ReadResource(ctx, params)
		case *mcp.ListPromptsParams:
			return up.ListPrompts(ctx, params)
		case *mcp.GetPromptParams:
			return up.GetPrompt(ctx, params)
		case *mcp.CompleteParams:
			return up.Complete(ctx, params)
		}
		return next(ctx, method, req)
	}
}

// callTool is the commit point of a tools/call: ask the gate, forward only on admit,
// then complete the effect with the upstream's result.
func (p *Proxy) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name := req.Params.Name
	arrival := p.order.number(req.Params.Meta)
	defer p.order.pass(arrival)
	p.mu.Lock()
	dead, tool := p.dead, p.tools[name]
	up := p.up
	p.mu.Unlock()
	if dead != nil {
		return notExecuted("", "NOT executed: %v; the proxy forwards nothing to it. Restart the MCP server (the host's config).", dead), nil
	}
	if len(req.Params.Arguments) > ArgsBytesMax {
		return notExecuted("", "NOT executed: the arguments are %d bytes, over the proxy's limit of %d.", len(req.Params.Arguments), ArgsBytesMax), nil
	}
	t, err := CallTarget(req.Params.Meta, p.cfg.Run, p.cfg.Server, name, req.Params.Arguments)
	if err != nil {
		return notExecuted("", "NOT executed: %v.", err), nil
	}
	var ann *Annotations
	if tool != nil && tool.Annotations != nil {
		ann = &Annotations{ReadOnly: tool.Annotations.ReadOnlyHint,
			Destructive: tool.Annotations.DestructiveHint != nil && *tool.Annotations.DestructiveHint}
	}
	mode, why := p.cfg.Policy.Mode(p.cfg.Server, name, ann)
	log := p.log.With("run", t.Run, "key", t.Key, "tool", name, "mode", string(mode))
	if err := p.order.wait(ctx, arrival); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		log.Warn("asking the gate out of the host's order", "err", err)
	}
	gctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), gateCallTimeout)
	epoch, err := p.gate.epoch(gctx, t.Run)
	cancel()
	if err != nil {
		return notExecuted("", "NOT executed: the gate did not answer for run %q: %v.", t.Run, err), nil
	}
	a, err := p.ask(ctx, req, t, epoch, mode == Gated, func() { p.order.pass(arrival) }, log)
	switch {
	case errors.Is(err, errHostGone):
		return nil, ctx.Err() // the host cancelled or left: nobody reads an answer
	case err != nil:
		return notExecuted("", "NOT executed: the gate refused or failed: %v.", err), nil
	}
	log.Info("gate", "answer", a.Answer.String(), "reason", a.Reason.String(), "why", why)
	switch a.Answer {
	case core.AnswerAdmit:
		return p.perform(ctx, up, req, t, log)
	case core.AnswerDuplicate:
		r := replay(a)
		if r.Result != nil {
			if r.Result.Meta == nil {
				r.Result.Meta = mcp.Meta{}
			}
			r.Result.Meta["soundgate/answer"] = "duplicate"
			return r.Result, nil
		}
		return notExecuted("duplicate", "NOT executed again: this call (the same tool and arguments, key %s) was already performed once in run %s; %s. Do not retry it.", t.Key, t.Run, r.Why), nil
	case core.AnswerDenied:
		res := notExecuted("denied", "NOT executed: the gate denied this call (%s). It must not be retried.", deniedWhy(a.Reason))
		res.Meta["soundgate/reason"] = a.Reason.String()
		return res, nil
	}
	// held: deferred, or the maximum hold passed.
	if p.cfg.Deferred {
		return notExecuted("held", "NOT executed yet: pending approval at the gate (run %s): call again with the same arguments to get the decision.", t.Run), nil
	}
	return notExecuted("held", "NOT executed: still waiting for approval at the gate (run %s) after %v, the proxy's maximum hold. The approval is still pending: call again with the same arguments to wait again.", t.Run, p.cfg.MaxHold), nil
}

// deniedWhy says a denial's reason in words.
func deniedWhy(r core.Reason) string {
	switch r {
	case core.ReasonRejected:
		return "rejected: an approver rejected it, or an approval its run was waiting on"
	case core.ReasonCancelled:
		return "cancelled: the run was cancelled"
	case core.ReasonTimedOut:
		return "timed_out: the run's deadline passed"
	case core.ReasonStaleEpoch:
		return "stale_epoch: the run was fenced, this attempt of it is over"
	case core.ReasonRetired:
		return "retired: the run is finished and forgotten"
	}
	return r.String()
}

// notExecuted is a tool error (isError: the model sees it) saying the call did not
// run; answer, if not empty, is the gate's answer, in _meta for programs.
func notExecuted(answer, format string, a ...any) *mcp.CallToolResult {
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, a...)}},
		Meta: mcp.Meta{"soundgate/executed": false}}
	if answer != "" {
		res.Meta["soundgate/answer"] = answer
	}
	return res
}

// errHostGone: the host cancelled the call or went away while it was held.
var errHostGone = errors.New("soundgate/mcpproxy: the host gave up the call")

// ask asks the gate until the answer is not held, the host gives up, the call is
// deferred or the maximum hold passes; while held it sends progress notifications
// if the host gave a progress token. An ask in flight when the host gives up is
// never abandoned at the gate: it finishes in the background, and an admit it brings
// is completed failed ("not performed"), so the record stays the truth. asked is
// called once the gate has answered the first ask: the calls the host sent after this
// one may then be asked.
func (p *Proxy) ask(ctx context.Context, req *mcp.CallToolRequest, t Target, epoch uint64, gated bool, asked func(), log *slog.Logger) (proto.AdmitResult, error) {
	start := time.Now()
	token := req.Params.GetProgressToken()
	var wait time.Duration // the first ask is answered at once
	for n := 1; ; n++ {
		type answer struct {
			a   proto.AdmitResult
			err error
		}
		done := make(chan answer, 1)
		p.bg.Add(1)
		go func() {
			defer p.bg.Done()
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+gateCallTimeout)
			defer cancel()
			a, err := p.gate.admit(actx, t, epoch, gated, wait)
			if ctx.Err() != nil && err == nil && a.Answer == core.AnswerAdmit {
				log.Warn("admitted after the host gave up the call: recorded as not performed")
				cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), gateCallTimeout)
				defer ccancel()
				if err := p.gate.complete(cctx, t, core.OutcomeFailed, errorRecord("not performed: the host cancelled the call while it was held", proto.ResultBytesMax)); err != nil {
					log.Error("complete", "err", err)
				}
			}
			done <- answer{a, err}
		}()
		var got answer
		select {
		case got = <-done:
		case <-ctx.Done():
			return proto.AdmitResult{}, errHostGone
		}
		if n == 1 {
			asked()
		}
		if ctx.Err() != nil {
			return proto.AdmitResult{}, errHostGone
		}
		if got.err != nil || got.a.Answer != core.AnswerHeld {
			return got.a, got.err
		}
		held := time.Since(start)
		if p.cfg.Deferred || held >= p.cfg.MaxHold {
			return got.a, nil
		}
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n),
				Message: fmt.Sprintf("held: waiting for approval at the gate (run %s), %v so far", t.Run, held.Round(time.Second))})
			if err != nil {
				log.Warn("progress notification", "err", err)
			}
		}
		wait = min(p.cfg.ProgressEvery, p.cfg.MaxHold-held)
	}
}

// perform forwards an admitted call to the upstream and completes the effect. The
// commit point is passed: the call and its completion run to their end even if the
// host cancels, so that what the gate records is what happened.
func (p *Proxy) perform(ctx context.Context, up *mcp.ClientSession, req *mcp.CallToolRequest, t Target, log *slog.Logger) (*mcp.CallToolResult, error) {
	uctx := context.WithoutCancel(ctx)
	res, err := up.CallTool(uctx, &mcp.CallToolParams{Meta: forwardedMeta(req.Params.Meta), Name: req.Params.Name,
		Arguments: json.RawMessage(orEmptyObject(req.Params.Arguments))})
	outcome, record := core.OutcomeOK, ""
	var answerErr error
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
		if res.IsError {
			outcome = core.OutcomeFailed
		}
		if record, err = resultRecord(res, proto.ResultBytesMax); err != nil {
			outcome, record = core.OutcomeFailed, errorRecord(err.Error(), proto.ResultBytesMax)
		} else if !fitsLine(t.Run, t.Key, record) {
			var r Record
			json.Unmarshal([]byte(record), &r)
			r.Result = nil
			record = encodeRecord(r)
		}
	case errors.As(err, &rpcErr):
		// The upstream answered with a JSON-RPC error: it refused the request.
		outcome, record, answerErr = core.OutcomeFailed, errorRecord("the upstream refused the request: "+rpcErr.Message, proto.ResultBytesMax), err
	default:
		// The connection ended with the call in flight: whether the tool acted is unknown.
		outcome = core.OutcomeFailed
		record = errorRecord("the upstream's connection ended with the call in flight; whether the tool acted is unknown", proto.ResultBytesMax)
		res = notExecuted("failed", "The upstream MCP server %q failed with the call in flight (%v): whether the tool acted is unknown. It is recorded as failed and will not be forwarded again with the same arguments.", p.cfg.Server, err)
		res.Meta["soundgate/executed"] = "unknown"
	}
	cctx, cancel := context.WithTimeout(uctx, gateCallTimeout)
	defer cancel()
	if cerr := p.gate.complete(cctx, t, outcome, record); cerr != nil {
		log.Error("complete failed: the effect happened but its outcome is not recorded (a replay hears duplicate without a result)", "err", cerr)
	}
	if answerErr != nil {
		return nil, answerErr
	}
	return res, nil
}

// forwardedMeta is the call's _meta without the proxy's own keys and the progress
// token (the proxy, not the upstream, reports progress to the host).
func forwardedMeta(m mcp.Meta) mcp.Meta {
	var out mcp.Meta
	for k, v := range m {
		if strings.HasPrefix(k, "soundgate/") || k == "progressToken" {
			continue
		}
		if out == nil {
			out = mcp.Meta{}
		}
		out[k] = v
	}
	return out
}

func orEmptyObject(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
