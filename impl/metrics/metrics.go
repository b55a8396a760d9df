// Package metrics counts what the gate's edges do, without a lock, and writes it in
// the Prometheus text exposition format (version 0.0.4), for `soundgate serve
// --http`'s /metrics.
//
// It is small on purpose: a Counter and a Histogram of atomics that the hot paths
// (the server's answers, the log's fdatasyncs) update at the cost of an atomic add,
// and a Writer that a scrape fills with every family, each with its HELP and TYPE.
// Gauges are not kept here: a scrape reads them where they live (the node's waiting
// admits, the server's connections) and writes them with Writer.Sample.
//
//	var w metrics.Writer
//	w.Family("soundgate_admits_total", metrics.TypeCounter, "Admits answered, by answer.")
//	w.Sample("soundgate_admits_total", float64(admits.Load()), metrics.Label{Name: "answer", Value: "admit"})
//	os.Stdout.Write(w.Bytes())
//
// Names are checked when written (a metric name, a label name, a sample outside its
// family, a family written twice): those are the program's mistakes, and the Writer
// panics on them, so that a test of the scrape catches them.
package metrics

import (
	"math"
	"strconv"
	"sync/atomic"
	"time"
)

// Counter is a count that only goes up. The zero value is 0 and ready to use.
type Counter struct{ v atomic.Uint64 }

// Inc adds 1.
func (c *Counter) Inc() { c.v.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) { c.v.Add(n) }

// Load returns the count.
func (c *Counter) Load() uint64 { return c.v.Load() }

// Histogram counts observations by bucket, as Prometheus' histograms do: each
// bucket counts the observations at most its upper bound, and the last bucket
// (+Inf) counts the rest. Observations are integers of a unit of their own (a
// duration's nanoseconds, a number of records); the exposition divides them by
// perUnit to write them in the metric's base unit (seconds: 1e9). Observe is two
// atomic adds after a scan of the bounds; it takes no lock.
type Histogram struct {
	bounds  []int64         // upper bounds, ascending, in the observed unit
	counts  []atomic.Uint64 // per bucket (not cumulative); the last is +Inf's
	sum     atomic.Int64    // of every observation, in the observed unit
	perUnit float64         // observed units per exposed unit
}

// bucketsMax bounds a histogram's buckets: each is a line of every scrape.
const bucketsMax = 32

// NewHistogram returns a histogram whose observations are written divided by
// perUnit, with the given upper bounds in the observed unit (ascending, at most 32).
func NewHistogram(perUnit float64, bounds ...int64) *Histogram {
	if len(bounds) == 0 || len(bounds) > bucketsMax || !(perUnit > 0) {
		panic("soundgate/metrics: a histogram needs 1 to 32 bounds and a positive unit")
	}
	for i := 1; i < len(bounds); i++ {
		if bounds[i] <= bounds[i-1] {
			panic("soundgate/metrics: histogram bounds must ascend")
		}
	}
	return &Histogram{bounds: append([]int64(nil), bounds...), counts: make([]atomic.Uint64, len(bounds)+1), perUnit: perUnit}
}

// NewDurationHistogram returns a histogram of durations, written in seconds.
func NewDurationHistogram(bounds ...time.Duration) *Histogram {
	ns := make([]int64, len(bounds))
	for i, b := range bounds {
		ns[i] = int64(b)
	}
	return NewHistogram(float64(time.Second), ns...)
}

// Observe counts one observation of v (in the observed unit).
func (h *Histogram) Observe(v int64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// ObserveDuration counts one duration, for a histogram of NewDurationHistogram.
func (h *Histogram) ObserveDuration(d time.Duration) { h.Observe(int64(d)) }

// HistogramSnapshot is a histogram's state at one moment, cumulative as the
// exposition writes it.
type HistogramSnapshot struct {
	Bounds []float64 // upper bounds, in the exposed unit
	Counts []uint64  // Counts[i]: observations at most Bounds[i]
	Count  uint64    // every observation (the +Inf bucket)
	Sum    float64   // of every observation, in the exposed unit
}

// Snapshot returns the histogram's counts. Each bucket is read atomically, not all
// of them at once: an observation that lands meanwhile may be in Count and not yet
// in Sum, never in a bucket but not in Count.
func (h *Histogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Bounds: make([]float64, len(h.bounds)), Counts: make([]uint64, len(h.bounds))}
	sum := h.sum.Load()
	var cum uint64
	for i, b := range h.bounds {
		cum += h.counts[i].Load()
		s.Bounds[i], s.Counts[i] = float64(b)/h.perUnit, cum
	}
	s.Count = cum + h.counts[len(h.bounds)].Load()
	s.Sum = float64(sum) / h.perUnit
	return s
}

// formatFloat writes v as the exposition format does (Go's shortest form; +Inf,
// -Inf, NaN).
func formatFloat(dst []byte, v float64) []byte {
	switch {
	case math.IsInf(v, +1):
		return append(dst, "+Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}
