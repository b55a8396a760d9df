package metrics_test

import (
	"bytes"
	"math"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/soundgate/soundgate/impl/metrics"
)

// parse reads what w wrote with Prometheus' own text parser, strict about names.
func parse(t *testing.T, w *metrics.Writer) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(w.Bytes()))
	require.NoError(t, err, "%s", w.Bytes())
	return fams
}

// TestHistogramBuckets: a bucket counts the observations at most its bound (the
// bound itself included), the +Inf bucket all of them, the sum is in the exposed
// unit.
func TestHistogramBuckets(t *testing.T) {
	for _, tc := range []struct {
		name    string
		h       *metrics.Histogram
		observe []int64
		counts  []uint64 // cumulative, per bound
		count   uint64
		sum     float64
	}{
		{"none", metrics.NewHistogram(1, 1, 2, 4), nil, []uint64{0, 0, 0}, 0, 0},
		{"on the bounds", metrics.NewHistogram(1, 1, 2, 4), []int64{1, 2, 4}, []uint64{1, 2, 3}, 3, 7},
		{"between and past", metrics.NewHistogram(1, 1, 2, 4), []int64{0, 3, 5, 1000}, []uint64{1, 1, 2}, 4, 1008},
		{"durations in seconds", metrics.NewDurationHistogram(time.Millisecond, time.Second),
			[]int64{int64(time.Millisecond), int64(2 * time.Millisecond), int64(3 * time.Second)}, []uint64{1, 2}, 3, 3.003},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range tc.observe {
				tc.h.Observe(v)
			}
			s := tc.h.Snapshot()
			require.Equal(t, tc.counts, s.Counts)
			require.Equal(t, tc.count, s.Count)
			require.InDelta(t, tc.sum, s.Sum, 1e-12)
		})
	}
	s := metrics.NewDurationHistogram(50*time.Microsecond, 2500*time.Millisecond).Snapshot()
	require.Equal(t, []float64{5e-05, 2.5}, s.Bounds, "bounds are exact in the exposed unit")
}

// TestWriterParses: what the writer writes is what Prometheus' parser reads back:
// families with their help and type, counters, gauges, histograms, labels with
// every character that needs escaping.
func TestWriterParses(t *testing.T) {
	h := metrics.NewDurationHistogram(time.Millisecond, time.Second)
	h.ObserveDuration(500 * time.Microsecond)
	h.ObserveDuration(2 * time.Second)
	var c metrics.Counter
	c.Add(41)
	c.Inc()
	var w metrics.Writer
	w.Family("x_total", metrics.TypeCounter, "Things, with a \\ and a\nsecond line.")
	w.Sample("x_total", float64(c.Load()), metrics.Label{Name: "kind", Value: `a "quoted" \ value` + "\n"})
	w.Sample("x_total", 0, metrics.Label{Name: "kind", Value: "b"})
	w.Family("y", metrics.TypeGauge, "A gauge.")
	w.Sample("y", math.Inf(1))
	w.Family("z_seconds", metrics.TypeHistogram, "A histogram.")
	w.Histogram("z_seconds", h.Snapshot(), metrics.Label{Name: "op", Value: "sync"})
	require.Equal(t, []string{"x_total", "y", "z_seconds"}, w.Families())

	fams := parse(t, &w)
	require.Len(t, fams, 3)
	x := fams["x_total"]
	require.Equal(t, dto.MetricType_COUNTER, x.GetType())
	require.Equal(t, "Things, with a \\ and a\nsecond line.", x.GetHelp())
	require.Len(t, x.Metric, 2)
	require.Equal(t, `a "quoted" \ value`+"\n", x.Metric[0].Label[0].GetValue())
	require.Equal(t, 42.0, x.Metric[0].Counter.GetValue())
	require.True(t, math.IsInf(fams["y"].Metric[0].Gauge.GetValue(), 1))
	z := fams["z_seconds"].Metric[0].Histogram
	require.Equal(t, dto.MetricType_HISTOGRAM, fams["z_seconds"].GetType())
	require.Equal(t, uint64(2), z.GetSampleCount())
	require.InDelta(t, 2.0005, z.GetSampleSum(), 1e-12)
	require.Len(t, z.Bucket, 3)
	require.Equal(t, 0.001, z.Bucket[0].GetUpperBound())
	require.Equal(t, uint64(1), z.Bucket[0].GetCumulativeCount())
	require.Equal(t, uint64(1), z.Bucket[1].GetCumulativeCount())
	require.True(t, math.IsInf(z.Bucket[2].GetUpperBound(), 1))
	require.Equal(t, uint64(2), z.Bucket[2].GetCumulativeCount())
	require.Equal(t, "sync", fams["z_seconds"].Metric[0].Label[0].GetValue())
}

// TestWriterRefusesMistakes: a name the format does not allow, a family without
// help or written twice, a sample outside its family: the program's mistakes, which
// the writer panics on so that any test of a scrape finds them.
func TestWriterRefusesMistakes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(w *metrics.Writer)
	}{
		{"bad metric name", func(w *metrics.Writer) { w.Family("soundgate-admits", metrics.TypeCounter, "x") }},
		{"name starts with a digit", func(w *metrics.Writer) { w.Family("1x", metrics.TypeGauge, "x") }},
		{"unknown type", func(w *metrics.Writer) { w.Family("x", metrics.Type("summary"), "x") }},
		{"no help", func(w *metrics.Writer) { w.Family("x", metrics.TypeGauge, "") }},
		{"family twice", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeGauge, "x")
			w.Family("x", metrics.TypeGauge, "x")
		}},
		{"sample before any family", func(w *metrics.Writer) { w.Sample("x", 1) }},
		{"sample of another family", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeGauge, "x")
			w.Sample("y", 1)
		}},
		{"sample of a histogram family", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeHistogram, "x")
			w.Sample("x", 1)
		}},
		{"histogram of a gauge family", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeGauge, "x")
			w.Histogram("x", metrics.NewHistogram(1, 1).Snapshot())
		}},
		{"bad label name", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeGauge, "x")
			w.Sample("x", 1, metrics.Label{Name: "a-b", Value: "v"})
		}},
		{"reserved label name", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeGauge, "x")
			w.Sample("x", 1, metrics.Label{Name: "__name__", Value: "v"})
		}},
		{"le outside a bucket", func(w *metrics.Writer) {
			w.Family("x", metrics.TypeGauge, "x")
			w.Sample("x", 1, metrics.Label{Name: "le", Value: "1"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Panics(t, func() { tc.write(&metrics.Writer{}) })
		})
	}
	for _, bad := range []func(){
		func() { metrics.NewHistogram(1) },
		func() { metrics.NewHistogram(1, 2, 1) },
		func() { metrics.NewHistogram(0, 1) },
	} {
		require.Panics(t, bad, "a histogram without ascending bounds or a unit")
	}
}

// BenchmarkObserve is what the log pays per fdatasync, and the server per answer
// (Counter.Inc), from many goroutines at once.
func BenchmarkObserve(b *testing.B) {
	h := metrics.NewDurationHistogram(25*time.Microsecond, 50*time.Microsecond, 100*time.Microsecond, time.Millisecond,
		10*time.Millisecond, 100*time.Millisecond, time.Second)
	b.Run("histogram", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for i := int64(0); pb.Next(); i++ {
				h.Observe(i % int64(2*time.Millisecond))
			}
		})
	})
	var c metrics.Counter
	b.Run("counter", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.Inc()
			}
		})
	})
}
