package server_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/server"
	"github.com/soundgate/soundgate/impl/server/servertest"
)

// BenchmarkWatch measures what a watch that never reads costs the admits of other
// connections. Each op is three gated admits of new keys, one round trip each (each
// opens an approval: a change every watch is told of), one on each of three gates:
// one nobody watches (quiet), one watched by a connection that takes every event
// (reading), and one watched by a connection that never reads its socket
// (stalled). Which goes first turns with each op, so that the arms see the same
// machine at the same moments. It reports each arm's p50 and p99 round trip, the
// ratios stalled/quiet and stalled/reading (what the watch's slowness costs, the
// figure that back-pressure keeps near 1), and stalled-lost 1 once the stalled
// watch was shown to have lost changes (it did fall behind). The write timeout is
// an hour, so that the stalled connection is not dropped while it is measured:
//
//	go test -run '^$' -bench Watch -benchtime 20000x ./impl/server/
func BenchmarkWatch(b *testing.B) {
	for _, durable := range []bool{false, true} {
		b.Run(map[bool]string{false: "memory", true: "durable"}[durable], func(b *testing.B) {
			o := func() servertest.Options {
				return servertest.Options{Node: benchNode(b, durable), Limits: server.Limits{WriteTimeout: time.Hour}}
			}
			quiet, reading, watched := servertest.Start(b, o()), servertest.Start(b, o()), servertest.Start(b, o())
			readAll(b, reading.Unix)
			stalled := stalledWatch(b, watched.Unix)
			names := [...]string{"quiet", "reading", "stalled"}
			arms := [...]*gatedAdmits{newGatedAdmits(b, quiet.Unix), newGatedAdmits(b, reading.Unix), newGatedAdmits(b, watched.Unix)}
			var lat [len(arms)][]time.Duration
			for i := range lat {
				lat[i] = make([]time.Duration, 0, b.N)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for j := range arms {
					arm := (i + j) % len(arms)
					lat[arm] = append(lat[arm], arms[arm].admit(b, i))
				}
			}
			b.StopTimer()
			if watched.Server.Watches() != 1 || reading.Server.Watches() != 1 {
				b.Fatalf("a watch is gone (%d, %d watches)", reading.Server.Watches(), watched.Server.Watches())
			}
			var p [len(arms)][2]float64 // arm, then p50, p99, in ns
			for arm, name := range names {
				slices.Sort(lat[arm])
				p[arm] = [2]float64{float64(lat[arm][len(lat[arm])/2]), float64(lat[arm][len(lat[arm])*99/100])}
				b.ReportMetric(p[arm][0], name+"-p50-ns")
				b.ReportMetric(p[arm][1], name+"-p99-ns")
			}
			b.ReportMetric(p[2][0]/p[0][0], "p50-stalled/quiet")
			b.ReportMetric(p[2][1]/p[0][1], "p99-stalled/quiet")
			b.ReportMetric(p[2][0]/p[1][0], "p50-stalled/reading")
			b.ReportMetric(p[2][1]/p[1][1], "p99-stalled/reading")
			lost := 0.0
			if stalled.sawLost(b) {
				lost = 1
			}
			b.ReportMetric(lost, "stalled-lost")
		})
	}
}

// readAll watches the gate at sock and takes every event until the benchmark ends.
func readAll(b *testing.B, sock string) {
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.Dial(ctx, sock, servertest.ApproverToken)
	if err != nil {
		b.Fatal(err)
	}
	w, err := c.Watch(ctx)
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if _, err := w.Next(ctx); err != nil {
				return
			}
		}
	}()
	b.Cleanup(func() { cancel(); <-done; c.Close() })
}

// gatedAdmits asks one gate for gated admits of new keys, a new run every
// gatedAdmitsPerRun of them: a run's approvals are listed for the watchers at each
// change of it (node.Watch), and a run of an agent waits for few at once.
type gatedAdmits struct {
	ctx       context.Context
	op, agent *client.Client
}

const gatedAdmitsPerRun = 8

func newGatedAdmits(b *testing.B, sock string) *gatedAdmits {
	ctx := context.Background()
	g := &gatedAdmits{ctx: ctx}
	var err error
	if g.op, err = client.Dial(ctx, sock, servertest.OperatorToken); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.op.Close() })
	if g.agent, err = client.Dial(ctx, sock, servertest.AgentToken); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.agent.Close() })
	return g
}

// admit asks for the i-th gated admit and returns its round trip (the run's open,
// every gatedAdmitsPerRun, not included).
func (g *gatedAdmits) admit(b *testing.B, i int) time.Duration {
	run := fmt.Sprint("bench-", i/gatedAdmitsPerRun)
	if i%gatedAdmitsPerRun == 0 {
		if _, err := g.op.Open(g.ctx, run, 0); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	res, err := g.agent.Admit(g.ctx, run, fmt.Sprint(i), 1, client.AdmitOptions{Gated: true, Description: "bench"})
	took := time.Since(start)
	if err != nil || res.Answer != core.AnswerHeld {
		b.Fatal(res, err)
	}
	return took
}

// stalledConn is a connection that watches and reads nothing until sawLost.
type stalledConn struct{ nc net.Conn }

func stalledWatch(b *testing.B, sock string) *stalledConn {
	nc, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	if _, err := nc.Write([]byte(hello(servertest.ApproverToken) + "\n" + watchLine + "\n")); err != nil {
		b.Fatal(err)
	}
	return &stalledConn{nc: nc}
}

// sawLost reads what the stalled connection was sent, for at most a second after
// its last line, and reports whether a lost event was among it.
func (s *stalledConn) sawLost(b *testing.B) bool {
	rd := proto.NewAnswerReader(s.nc)
	for {
		s.nc.SetReadDeadline(time.Now().Add(time.Second))
		line, err := rd.ReadLine()
		if err != nil {
			return false
		}
		if strings.Contains(string(line), `"event":"lost"`) {
			return true
		}
	}
}
