package main

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/soundgate/soundgate/clients/go/client"
	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// rawDriver drives one connection with the wire protocol itself: it keeps depth admits
// in flight, writes every request it can send in one write, and reads the answers in
// order. This is how redis-benchmark drives Redis (an event loop, no client library),
// and the reason is the same: the load generator shares the machine with the gate, so
// every microsecond it spends per request is taken from the gate it measures. The
// client library (--driver client) pays a goroutine hand-off and a channel per call;
// it is the driver for the gated mix and for measuring what a library caller sees.
type rawDriver struct {
	b     *bencher
	nc    net.Conn
	rd    *proto.Reader
	id    int // the connection's index
	depth int
	rng   uint64

	nextID   int64
	seq      int
	out      []byte   // requests encoded since the last write
	inflight []rawReq // sent and not answered, in the order sent
	done     []rawKey // keys this connection had admitted, for duplicates
	lat      map[string][]time.Duration
	req      proto.Request

	// rawLoop's (Linux): the socket, taken from nc, and its state.
	fd       int
	src      *benchSource
	wantOut  bool // EPOLLOUT is watched: out did not fit in the socket
	finished bool
}

type rawKey struct {
	run core.RunID
	key core.Key
}

type rawReq struct {
	id    int64
	kind  string // "new" or "dup"
	k     rawKey
	start time.Time
}

// dialRaw connects to addr (the forms client.Dial takes) and says hello with token.
func dialRaw(ctx context.Context, addr, token string) (net.Conn, *proto.Reader, error) {
	network, address := client.SplitAddr(addr)
	var d net.Dialer
	nc, err := d.DialContext(ctx, network, address)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	hello := proto.AppendRequest(nil, &proto.Request{ID: proto.IntID(0), Method: proto.MethodHello, Version: proto.Version, Token: token})
	rd := proto.NewReader(nc)
	if _, err := nc.Write(hello); err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("hello: %w", err)
	}
	line, err := rd.ReadLine()
	if err == nil {
		var resp proto.Response
		if resp, err = proto.DecodeResponse(line); err == nil && resp.Error != nil {
			err = resp.Error.Err()
		}
	}
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("hello: %w", err)
	}
	return nc, rd, nil
}

// loop runs the closed loop until stop, then collects the answers still in flight.
func (d *rawDriver) loop(stop time.Time) {
	d.lat = map[string][]time.Duration{}
	defer d.nc.Close()
	for {
		if time.Now().Before(stop) {
			for len(d.inflight) < d.depth {
				d.enqueue()
			}
		}
		if len(d.out) > 0 {
			if _, err := d.nc.Write(d.out); err != nil {
				d.b.fail(fmt.Errorf("connection %d: write: %w", d.id, err))
				return
			}
			d.out = d.out[:0]
		}
		if len(d.inflight) == 0 {
			return
		}
		// One answer at least, then every answer already read from the socket: the
		// next requests go out together, as a pipelining client sends them.
		for {
			if err := d.answer(); err != nil {
				d.b.fail(fmt.Errorf("connection %d: %w", d.id, err))
				return
			}
			if len(d.inflight) == 0 || d.rd.Buffered() == 0 {
				break
			}
		}
	}
}

// enqueue encodes the next request of the mix (new or dup).
func (d *rawDriver) enqueue() {
	d.rng ^= d.rng << 13
	d.rng ^= d.rng >> 7
	d.rng ^= d.rng << 17
	pick := int(d.rng % 100)
	var r rawReq
	if pick < d.b.mix.dup && len(d.done) > 0 {
		r.kind, r.k = "dup", d.done[int(d.rng>>16)%len(d.done)]
	} else {
		d.seq++
		run := core.RunID(d.b.runs[int(d.rng>>8)%len(d.b.runs)])
		r.kind, r.k = "new", rawKey{run, core.Key("c" + strconv.Itoa(d.id) + "-" + strconv.Itoa(d.seq))}
	}
	d.nextID++
	r.id, r.start = d.nextID, time.Now()
	d.req = proto.Request{ID: proto.IntID(r.id), Method: proto.MethodAdmit, Run: r.k.run, Key: r.k.key, Epoch: 1}
	d.out = proto.AppendRequest(d.out, &d.req)
	d.inflight = append(d.inflight, r)
	d.b.requests.Add(1)
}

// answer reads one answer, which must be for the oldest request in flight, and
// checks it: a new key is admitted, a duplicate is answered duplicate.
func (d *rawDriver) answer() error {
	line, err := d.rd.ReadLine()
	if err != nil {
		return fmt.Errorf("read: %w", err)
	}
	resp, err := proto.DecodeResponse(line)
	if err != nil {
		return err
	}
	r := d.inflight[0]
	d.inflight = d.inflight[1:]
	if resp.ID != proto.IntID(r.id) {
		return fmt.Errorf("answer for id %s, want %d (answers out of order)", resp.ID, r.id)
	}
	if resp.Error != nil {
		return fmt.Errorf("admit %s/%s: %w", r.k.run, r.k.key, resp.Error.Err())
	}
	var res proto.AdmitResult
	if err := res.UnmarshalJSON(resp.Result); err != nil {
		return err
	}
	want := core.AnswerAdmit
	if r.kind == "dup" {
		want = core.AnswerDuplicate
	}
	if res.Answer != want {
		return fmt.Errorf("admit %s/%s: answer %s, want %s", r.k.run, r.k.key, res.Answer, want)
	}
	d.lat[r.kind] = append(d.lat[r.kind], time.Since(r.start))
	if r.kind == "new" {
		d.b.admissions.Add(1)
		if len(d.done) < 4096 {
			d.done = append(d.done, r.k)
		}
	}
	return nil
}
