package proto_test

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	. "github.com/soundgate/soundgate/impl/proto"
)

// readAll reads every line of r, recording each error kind as "!type".
func readAll(t *testing.T, r *Reader) []string {
	t.Helper()
	var out []string
	for i := 0; i < 1000; i++ {
		line, err := r.ReadLine()
		switch {
		case err == nil:
			out = append(out, string(line))
		case err == io.EOF:
			return out
		default:
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("ReadLine: unexpected error %v", err)
			}
			out = append(out, "!"+de.Err.Type)
		}
	}
	t.Fatal("ReadLine never reached EOF")
	return nil
}

func TestReader(t *testing.T) {
	long := strings.Repeat("x", LineBytesMax)
	cases := []struct {
		name string
		in   string
		want []string
	}{
		{"LF", "a\nb\n", []string{"a", "b"}},
		{"CRLF", "a\r\nb\r\n", []string{"a", "b"}},
		{"mixed", "a\r\nb\nc\r\n", []string{"a", "b", "c"}},
		{"last line without LF", "a\nb", []string{"a", "b"}},
		{"last line CR without LF", "a\nb\r", []string{"a", "b"}},
		{"blank lines skipped", "\n\r\n  \t\na\n \n", []string{"a"}},
		{"CR inside a line kept", "a\rb\n", []string{"a\rb"}},
		{"at the limit", long + "\n", []string{long}},
		{"at the limit CRLF", long + "\r\n", []string{long}},
		{"one over the limit", long + "x\nok\n", []string{"!line_too_long", "ok"}},
		{"one over the limit CRLF", long + "x\r\nok\n", []string{"!line_too_long", "ok"}},
		{"10 MB line then a line", strings.Repeat("y", 10<<20) + "\nok\n", []string{"!line_too_long", "ok"}},
		{"10 MB line at EOF", strings.Repeat("y", 10<<20), []string{"!line_too_long"}},
		{"over the limit at EOF", long + "x", []string{"!line_too_long"}},
		{"lines around a long one", "a\n" + long + "zz\nb\n", []string{"a", "!line_too_long", "b"}},
		{"empty", "", nil},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			if rname == "one byte" && len(tc.in) > 1<<20 {
				continue // the same split points are covered by the shorter cases
			}
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got := readAll(t, NewReader(wrap(strings.NewReader(tc.in))))
				if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
					t.Fatalf("lines = %q, want %q", got, tc.want)
				}
			})
		}
	}
}

// A source that never makes progress is an error, not a busy loop.
func TestReaderNoProgress(t *testing.T) {
	r := NewReader(emptyReader{})
	if _, err := r.ReadLine(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("ReadLine = %v, want io.ErrNoProgress", err)
	}
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

// A read error other than EOF is returned after the complete lines before it; a
// partial line before it is dropped.
func TestReaderError(t *testing.T) {
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(strings.NewReader("a\nb"), iotest.ErrReader(boom)))
	if line, err := r.ReadLine(); err != nil || string(line) != "a" {
		t.Fatalf("ReadLine = %q, %v", line, err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Fatalf("ReadLine = %v, want boom", err)
	}
	if _, err := r.ReadLine(); !errors.Is(err, boom) {
		t.Fatalf("the error is not sticky: %v", err)
	}
}

func TestReaderSize(t *testing.T) {
	cases := []struct {
		limit int
		in    string
		want  []string
	}{
		{4, "abcd\nabcde\nab\r\n", []string{"abcd", "!line_too_long", "ab"}},
		{4, "abcd\r\nabcde\r\n", []string{"abcd", "!line_too_long"}},
		{1, "a\nbb\n\nc", []string{"a", "!line_too_long", "c"}},
		{0, "a\nbb\n", []string{"a", "!line_too_long"}}, // clamped to 1
	}
	for _, tc := range cases {
		got := readAll(t, NewReaderSize(iotest.OneByteReader(strings.NewReader(tc.in)), tc.limit))
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("limit %d, %q: lines %q, want %q", tc.limit, tc.in, got, tc.want)
		}
	}
}
