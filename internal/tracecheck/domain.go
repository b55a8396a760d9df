// Package tracecheck validates a trace of the real gate (node.Config.Trace) against
// the TLA+ spec: every step the core took must be a step of the spec's action of the
// same name with the same arguments, from the state the trace has reached, with the
// answer the spec gives and to the state the trace's view of the run shows; every
// answer handed back must be its step's; every start must find the state the durable
// prefix of the trace built; and the whole trace must be consumed. docs/verify/drift.md
// ("Trace validation") says what it does and does not establish.
package tracecheck

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/soundgate/soundgate/impl/node"
)

// line is one trace line of any kind (node/trace.go).
type line struct {
	Seq       uint64                    `json:"seq"`
	LSN       uint64                    `json:"lsn"`
	Op        string                    `json:"op"`
	Run       string                    `json:"run"`
	Key       string                    `json:"key"`
	Epoch     uint64                    `json:"epoch"`
	Gated     bool                      `json:"gated"`
	Decision  string                    `json:"decision"`
	Outcome   string                    `json:"outcome"`
	Upto      bool                      `json:"upto"`
	Persist   bool                      `json:"persist"`
	View      *node.TraceView           `json:"view"`
	Deliver   *uint64                   `json:"deliver"`
	Recovered *uint64                   `json:"recovered"`
	Runs      map[string]node.TraceView `json:"runs"`
	node.TraceAnswer
	num int // 1-based line number in the input
}

func (l *line) kind() string {
	switch {
	case l.Recovered != nil:
		return "recovered"
	case l.Deliver != nil:
		return "deliver"
	}
	return "step"
}

// parse reads the trace. A line cut short by a crash (it does not parse, and it is
// the last of its process: the next line is a recovery, or there is none) is
// dropped and counted; any other line that does not parse is an error.
func parse(text string) (lines []*line, torn int, err error) {
	raw := strings.Split(text, "\n")
	for i, s := range raw {
		if strings.TrimSpace(s) == "" {
			continue
		}
		l := &line{num: i + 1}
		if err := json.Unmarshal([]byte(s), l); err != nil {
			if lastOfProcess(raw, i) {
				torn++
				continue
			}
			return nil, 0, fmt.Errorf("trace line %d: %v", i+1, err)
		}
		if l.kind() == "step" && l.Op == "" {
			return nil, 0, fmt.Errorf("trace line %d: neither a step, a delivery nor a recovery", i+1)
		}
		lines = append(lines, l)
	}
	return lines, torn, nil
}

func lastOfProcess(raw []string, i int) bool {
	for _, s := range raw[i+1:] {
		if strings.TrimSpace(s) != "" {
			return strings.HasPrefix(s, `{"recovered":`)
		}
	}
	return true
}

// domain names the trace's runs and keys as the spec's model values: run i is ri,
// and the keys of each run are k1, k2, ... in the order the trace first names them
// (nothing in the spec relates the keys of two runs, so each run may number its own).
type domain struct {
	runs     map[string]int
	sorted   []string // the runs' ids in byte order
	keys     map[string]map[string]int
	maxKeys  int
	maxEpoch uint64
}

func newDomain(lines []*line) *domain {
	d := &domain{runs: map[string]int{}, keys: map[string]map[string]int{}}
	run := func(r string) {
		if _, ok := d.runs[r]; !ok {
			d.runs[r] = len(d.runs) + 1
			d.keys[r] = map[string]int{}
		}
	}
	key := func(r, k string) {
		run(r)
		if _, ok := d.keys[r][k]; !ok {
			d.keys[r][k] = len(d.keys[r]) + 1
			d.maxKeys = max(d.maxKeys, len(d.keys[r]))
		}
	}
	view := func(r string, v node.TraceView) {
		run(r)
		d.maxEpoch = max(d.maxEpoch, v.Epoch)
		for _, k := range v.Pending {
			key(r, k)
		}
		for _, k := range sortedKeys(v.Effects) {
			key(r, k)
			d.maxEpoch = max(d.maxEpoch, v.Effects[k].Epoch)
		}
	}
	for _, l := range lines {
		switch l.kind() {
		case "step":
			run(l.Run)
			if l.Key != "" {
				key(l.Run, l.Key)
			}
			if l.View != nil {
				view(l.Run, *l.View)
			}
		case "recovered":
			for _, r := range sortedKeys(l.Runs) {
				view(r, l.Runs[r])
			}
		}
	}
	d.sorted = sortedKeys(d.runs)
	return d
}

// config is the model configuration over the domain: Fence is enabled below
// MaxEpoch, one above the highest epoch the gate issued. The epochs admits present
// are the clients' and are not bounded by it (an epoch above the run's is bad_epoch
// whatever it is).
func (d *domain) config() string {
	var runs, keys []string
	for i := 1; i <= max(1, len(d.runs)); i++ {
		runs = append(runs, fmt.Sprintf("r%d", i))
	}
	for i := 1; i <= max(1, d.maxKeys); i++ {
		keys = append(keys, fmt.Sprintf("k%d", i))
	}
	return fmt.Sprintf("CONSTANTS\n  Runs = {%s}\n  Keys = {%s}\n  MaxEpoch = %d\nINIT Init\nNEXT Next\n",
		strings.Join(runs, ", "), strings.Join(keys, ", "), d.maxEpoch+1)
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
