package mcpproxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// arrivalMeta is the _meta key under which the host line filter numbers each
// tools/call in the order the host sent it. The SDK handles calls concurrently, so
// without the number two calls of one model turn could reach the gate in either
// order, and a sibling sent after a gated call could be admitted before the gate
// holds the run.
const arrivalMeta = "soundgate/arrival"

// orderWaitMax bounds how long a call waits for the calls the host sent before it to
// be asked of the gate: a bound on the harm of a predecessor that never arrives, not a
// timing the order relies on (predecessors pass within one gate round trip).
const orderWaitMax = time.Second

// arrivals hands out arrival numbers to tools/calls as the host line filter reads them
// and lets each be asked of the gate only once every earlier one has been (passed).
// A number is passed when its first gate answer is in, when its call returns, or when
// the SDK answers its id without calling the tool (an unknown tool, bad params).
type arrivals struct {
	nonce   string        // tags this proxy's numbers: a host cannot forge one
	waitMax time.Duration // orderWaitMax

	mu     sync.Mutex
	next   uint64            // numbers given out: 1..next
	low    uint64            // every number <= low has passed
	passed map[uint64]bool   // passed numbers above low
	byID   map[string]uint64 // the JSON-RPC id (compact JSON) of each number not yet passed
	idOf   map[uint64]string // the inverse of byID
	moved  chan struct{}     // closed and replaced whenever low moves
}

func newArrivals() *arrivals {
	var b [8]byte
	rand.Read(b[:])
	return &arrivals{nonce: hex.EncodeToString(b[:]), waitMax: orderWaitMax, passed: map[uint64]bool{}, byID: map[string]uint64{}, idOf: map[uint64]string{}, moved: make(chan struct{})}
}

// arrive numbers a tools/call line with the given id and returns the line with the
// number in params._meta (replacing any value the host put there). A line whose
// params or _meta is not an object is returned unchanged: the SDK refuses it.
func (a *arrivals) arrive(line []byte, id json.RawMessage) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	params := map[string]json.RawMessage{}
	if p, ok := msg["params"]; ok && json.Unmarshal(p, &params) != nil {
		return line
	}
	meta := map[string]json.RawMessage{}
	if m, ok := params["_meta"]; ok && json.Unmarshal(m, &meta) != nil {
		return line
	}
	a.mu.Lock()
	a.next++
	n := a.next
	a.byID[compactID(id)], a.idOf[n] = n, compactID(id)
	a.mu.Unlock()
	meta[arrivalMeta], _ = json.Marshal(a.nonce + "-" + strconv.FormatUint(n, 10))
	params["_meta"], _ = json.Marshal(meta)
	msg["params"], _ = json.Marshal(params)
	out, err := json.Marshal(msg)
	if err != nil {
		a.pass(n)
		return line
	}
	return out
}

// number reads this proxy's arrival number from a call's _meta (0: none, or forged).
func (a *arrivals) number(meta map[string]any) uint64 {
	s, _ := meta[arrivalMeta].(string)
	rest, ok := strings.CutPrefix(s, a.nonce+"-")
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(rest, 10, 64)
	if err != nil {
		return 0
	}
	return n
}

// wait blocks until every number before n has passed, ctx ends or orderWaitMax
// passes; it says which. After orderWaitMax every number before n is passed, so that
// one lost predecessor delays the calls after it once, not forever.
func (a *arrivals) wait(ctx context.Context, n uint64) error {
	timer := time.NewTimer(a.waitMax)
	defer timer.Stop()
	for {
		a.mu.Lock()
		low, moved := a.low, a.moved
		a.mu.Unlock()
		if n == 0 || low >= n-1 {
			return nil
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
			for k := low + 1; k < n; k++ {
				a.pass(k)
			}
			return fmt.Errorf("the calls sent before this one (up to arrival %d) were not all asked of the gate within %v", n-1, a.waitMax)
		}
	}
}

// pass marks n passed; passing a number twice is harmless.
func (a *arrivals) pass(n uint64) {
	if n == 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if n <= a.low {
		return
	}
	a.passed[n] = true
	if id, ok := a.idOf[n]; ok {
		delete(a.byID, id)
		delete(a.idOf, n)
	}
	if !a.passed[a.low+1] {
		return
	}
	for a.passed[a.low+1] {
		delete(a.passed, a.low+1)
		a.low++
	}
	close(a.moved)
	a.moved = make(chan struct{})
}

// answered passes the number of the call whose response the SDK writes (id), for the
// calls the SDK answers without calling the tool.
func (a *arrivals) answered(id json.RawMessage) {
	a.mu.Lock()
	n, ok := a.byID[compactID(id)]
	a.mu.Unlock()
	if ok {
		a.pass(n)
	}
}

func compactID(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}
