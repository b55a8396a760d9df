package metrics

import (
	"slices"
	"strings"
)

// Type is a metric family's type, as its TYPE line names it.
type Type string

// The types the gate writes.
const (
	TypeCounter   Type = "counter"
	TypeGauge     Type = "gauge"
	TypeHistogram Type = "histogram"
)

// ContentType is the media type of what a Writer writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// Label is one label of a sample.
type Label struct{ Name, Value string }

// Writer accumulates families in the text exposition format. Each family begins
// with Family (its HELP and TYPE lines), and its samples follow it, before the next
// family. The zero value is ready to use.
type Writer struct {
	b      []byte
	family string // the family being written
	typ    Type
	names  []string // every family written, in order
}

// Family begins the family name, of type typ, described by help (one sentence that
// says what is counted, in which unit).
func (w *Writer) Family(name string, typ Type, help string) {
	mustName(name)
	switch typ {
	case TypeCounter, TypeGauge, TypeHistogram:
	default:
		panic("soundgate/metrics: unknown type " + string(typ))
	}
	if help == "" {
		panic("soundgate/metrics: family " + name + " has no help")
	}
	if slices.Contains(w.names, name) {
		panic("soundgate/metrics: family " + name + " written twice")
	}
	w.names = append(w.names, name)
	w.family, w.typ = name, typ
	w.b = append(w.b, "# HELP "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = appendEscaped(w.b, help, false)
	w.b = append(w.b, "\n# TYPE "...)
	w.b = append(w.b, name...)
	w.b = append(w.b, ' ')
	w.b = append(w.b, typ...)
	w.b = append(w.b, '\n')
}

// Sample writes one sample of the current family, a counter or a gauge.
func (w *Writer) Sample(name string, v float64, labels ...Label) {
	if name != w.family || w.typ == TypeHistogram {
		panic("soundgate/metrics: sample " + name + " outside its family (" + w.family + ")")
	}
	w.sample(name, "", v, labels)
}

// Histogram writes the current family's histogram h with labels: its cumulative
// buckets, sum and count.
func (w *Writer) Histogram(name string, h HistogramSnapshot, labels ...Label) {
	if name != w.family || w.typ != TypeHistogram {
		panic("soundgate/metrics: histogram " + name + " outside its family (" + w.family + ")")
	}
	le := make([]Label, len(labels)+1)
	copy(le, labels)
	for i, b := range h.Bounds {
		le[len(labels)] = Label{"le", string(formatFloat(nil, b))}
		w.sample(name, "_bucket", float64(h.Counts[i]), le)
	}
	le[len(labels)] = Label{"le", "+Inf"}
	w.sample(name, "_bucket", float64(h.Count), le)
	w.sample(name, "_sum", h.Sum, labels)
	w.sample(name, "_count", float64(h.Count), labels)
}

func (w *Writer) sample(name, suffix string, v float64, labels []Label) {
	w.b = append(w.b, name...)
	w.b = append(w.b, suffix...)
	if len(labels) > 0 {
		w.b = append(w.b, '{')
		for i, l := range labels {
			mustLabel(l.Name, suffix == "_bucket" && i == len(labels)-1)
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = append(w.b, l.Name...)
			w.b = append(w.b, `="`...)
			w.b = appendEscaped(w.b, l.Value, true)
			w.b = append(w.b, '"')
		}
		w.b = append(w.b, '}')
	}
	w.b = append(w.b, ' ')
	w.b = formatFloat(w.b, v)
	w.b = append(w.b, '\n')
}

// Bytes returns what was written.
func (w *Writer) Bytes() []byte { return w.b }

// Families returns the names of the families written, in order.
func (w *Writer) Families() []string { return slices.Clone(w.names) }

// appendEscaped escapes s as a HELP text (backslash, newline) or, with quote, as a
// label value (and the double quote).
func appendEscaped(dst []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			dst = append(dst, `\\`...)
		case c == '\n':
			dst = append(dst, `\n`...)
		case c == '"' && quote:
			dst = append(dst, `\"`...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// mustName panics unless name is a metric name of the classic form,
// [a-zA-Z_:][a-zA-Z0-9_:]*.
func mustName(name string) {
	if !validName(name, true) {
		panic("soundgate/metrics: bad metric name " + name)
	}
}

// mustLabel panics unless name is a label name, [a-zA-Z_][a-zA-Z0-9_]*, not
// reserved (__ is Prometheus', le the histograms').
func mustLabel(name string, le bool) {
	if !validName(name, false) || strings.HasPrefix(name, "__") || (name == "le") != le {
		panic("soundgate/metrics: bad label name " + name)
	}
}

func validName(s string, colon bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || colon && c == ':' || i > 0 && c >= '0' && c <= '9'
		if !ok {
			return false
		}
	}
	return true
}
