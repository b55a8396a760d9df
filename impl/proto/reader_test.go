package proto_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/prototest"
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
			out = append(out, "!"+de.Err.Type) // prototest.TooLong for an oversize line
		}
	}
	t.Fatal("ReadLine never reached EOF")
	return nil
}

func TestReader(t *testing.T) {
	cases := append([]prototest.StreamCase{}, prototest.Streams...)
	cases = append(cases,
		prototest.StreamCase{Name: "10 MB line then a line", In: strings.Repeat("y", 10<<20) + "\nok\n", Limit: LineBytesMax, Want: []string{prototest.TooLong, "ok"}},
		prototest.StreamCase{Name: "10 MB line at EOF", In: strings.Repeat("y", 10<<20), Limit: LineBytesMax, Want: []string{prototest.TooLong}},
		prototest.StreamCase{Name: "limit 0 is 1", In: "a\nbb\n", Limit: 0, Want: []string{"a", prototest.TooLong}},
	)
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, tc := range cases {
		for rname, wrap := range readers {
			if rname == "one byte" && len(tc.In) > 1<<20 {
				continue // the same split points are covered by the shorter cases
			}
			t.Run(tc.Name+"/"+rname, func(t *testing.T) {
				r := NewReaderSize(wrap(strings.NewReader(tc.In)), tc.Limit)
				if tc.Limit == LineBytesMax && rname == "whole" {
					r = NewReader(strings.NewReader(tc.In))
				}
				got := readAll(t, r)
				if strings.Join(got, "|") != strings.Join(tc.Want, "|") || len(got) != len(tc.Want) {
					t.Fatalf("lines = %q, want %q", got, tc.Want)
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

// TestReaderGrowsGeometrically: the Reader's buffer doubles for a long line, so a line
// of L bytes costs O(log L) allocations and copies, not O(L / 4 KiB).
func TestReaderGrowsGeometrically(t *testing.T) {
	line := strings.Repeat("x", LineBytesMax-1) + "\n"
	allocs := testing.AllocsPerRun(10, func() {
		if _, err := NewReader(strings.NewReader(line)).ReadLine(); err != nil {
			t.Fatal(err)
		}
	})
	// The Reader, its source, an 8 KiB buffer and four doublings to the limit.
	if allocs > 8 {
		t.Fatalf("%.0f allocations to read one line of %d bytes, want at most 8", allocs, len(line))
	}
}

// wouldBlockSource hands out its chunks one per Read, and ErrWouldBlock between two
// chunks, as a non-blocking socket read only when epoll says readable does; then EOF.
type wouldBlockSource struct {
	chunks  []string
	blocked bool
	blocks  int
}

func (s *wouldBlockSource) Read(p []byte) (int, error) {
	if !s.blocked {
		s.blocked = true
		s.blocks++
		return 0, ErrWouldBlock
	}
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	s.blocked = false
	n := copy(p, s.chunks[0])
	if s.chunks[0] = s.chunks[0][n:]; s.chunks[0] == "" {
		s.chunks = s.chunks[1:]
	}
	return n, nil
}

// TestReaderWouldBlock: ErrWouldBlock from the source is returned and not sticky, and
// the Reader goes on where it stopped, inside a line or inside an oversize line that
// it is discarding.
func TestReaderWouldBlock(t *testing.T) {
	long := strings.Repeat("x", 40)
	for _, c := range []struct {
		name   string
		chunks []string
		want   []string
	}{
		{"whole lines", []string{"a\n", "b\n"}, []string{"a", "b"}},
		{"a line split across chunks", []string{"ab", "c\nd", "e\n"}, []string{"abc", "de"}},
		{"a last line without LF", []string{"a\nb", "c"}, []string{"a", "bc"}},
		{"an oversize line split across chunks", []string{long[:20], long[20:], long, "\nok\n"}, []string{prototest.TooLong, "ok"}},
		{"an oversize line ended by EOF", []string{"a\n", long, long}, []string{"a", prototest.TooLong}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := &wouldBlockSource{chunks: append([]string(nil), c.chunks...)}
			r := NewReaderSize(src, 16)
			var got []string
			blocked := 0
			for i := 0; ; i++ {
				if i > 1000 {
					t.Fatal("ReadLine never reached EOF")
				}
				line, err := r.ReadLine()
				if errors.Is(err, ErrWouldBlock) {
					blocked++
					if r.Buffered() > 16+2+4096 {
						t.Fatalf("the reader holds %d bytes while blocked", r.Buffered())
					}
					continue
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					var de *DecodeError
					if !errors.As(err, &de) {
						t.Fatalf("ReadLine: %v", err)
					}
					got = append(got, "!"+de.Err.Type)
					continue
				}
				got = append(got, string(line))
			}
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Fatalf("lines %q, want %q", got, c.want)
			}
			if src.blocks < len(c.chunks) {
				t.Fatalf("the source said would-block %d times for %d chunks: the Reader did not stop at it", src.blocks, len(c.chunks))
			}
			if blocked != src.blocks {
				t.Fatalf("ReadLine returned ErrWouldBlock %d times for the source's %d: a reader that reads on would spin on a socket with nothing to read", blocked, src.blocks)
			}
		})
	}
}

// recordingReader serves data in reads of at most chunk bytes and records the size of
// the buffer each Read was offered.
type recordingReader struct {
	data   []byte
	chunk  int
	offers []int
}

func (r *recordingReader) Read(p []byte) (int, error) {
	r.offers = append(r.offers, len(p))
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.chunk)], r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReaderStartsAt8KiB: "The Reader's memory starts at 8 KiB" (doc of Reader): its
// first read offers the source exactly 8 KiB, and while lines stay short no read
// offers more.
func TestReaderStartsAt8KiB(t *testing.T) {
	src := &recordingReader{data: bytes.Repeat([]byte("short line\n"), 5000), chunk: 1000}
	r := NewReader(src)
	lines := 0
	for {
		_, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		lines++
	}
	if lines != 5000 || len(src.offers) == 0 {
		t.Fatalf("%d lines, %d reads", lines, len(src.offers))
	}
	if src.offers[0] != 8<<10 {
		t.Errorf("the first read offered %d bytes, want 8 KiB", src.offers[0])
	}
	if m := slices.Max(src.offers); m > 8<<10 {
		t.Errorf("a read offered %d bytes while every line is short", m)
	}
}

// failingReader returns data in one read, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// TestReaderDiscardsAsSoonAsTooLong: "A line longer than LineBytesMax is never held in
// memory" (doc of Reader): a pending line without LF is dropped, and reported as
// line_too_long, as soon as it cannot be within the limit whatever comes next: more
// than the limit plus one byte (a CR may still come before its LF). So when the source
// fails after a partial line, a partial line of limit+2 bytes or more was already
// discarded and is reported before the source's error, and a shorter one is dropped
// silently (a broken connection executes no partial line).
func TestReaderDiscardsAsSoonAsTooLong(t *testing.T) {
	boom := errors.New("boom")
	const limit = 8
	for n := limit - 1; n <= limit+4; n++ {
		r := NewReaderSize(&failingReader{data: bytes.Repeat([]byte("x"), n), err: boom}, limit)
		var got []string
		for i := 0; i < 3; i++ {
			_, err := r.ReadLine()
			if errors.Is(err, ErrLineTooLong) {
				if de := (*DecodeError)(nil); !errors.As(err, &de) || de.Offset != -1 {
					t.Errorf("the Reader's line_too_long has no place in a line, offset -1: %#v", err)
				}
				got = append(got, "too long")
				continue
			}
			got = append(got, err.Error())
			break
		}
		want := "[boom]"
		if n >= limit+2 {
			want = "[too long boom]"
		}
		if fmt.Sprint(got) != want {
			t.Errorf("a partial line of %d bytes (limit %d) then an error: %v, want %s", n, limit, got, want)
		}
	}
}

// TestReaderBuffered: Buffered is the number of bytes the Reader holds that ReadLine
// has not returned yet (the server answers at once when it is 0): after each line of a
// stream read in one piece, it is the length of the rest of the stream.
func TestReaderBuffered(t *testing.T) {
	stream := "a\nbb\r\n\nccc\ndddd"
	r := NewReader(strings.NewReader(stream))
	if r.Buffered() != 0 {
		t.Fatalf("Buffered before any read = %d", r.Buffered())
	}
	rest := stream
	for _, want := range []string{"a", "bb", "ccc", "dddd"} {
		line, err := r.ReadLine()
		if err != nil || string(line) != want {
			t.Fatalf("ReadLine = %q, %v; want %q", line, err, want)
		}
		rest = rest[strings.Index(rest, want)+len(want):]
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, "\r"), "\n")
		if got := r.Buffered(); got != len(rest) {
			t.Errorf("after %q: Buffered = %d, want %d (%q)", want, got, len(rest), rest)
		}
	}
}

// badCountReader returns a count outside 0..len(p), which an io.Reader must not.
type badCountReader struct{ n func(p []byte) int }

func (r badCountReader) Read(p []byte) (int, error) { return r.n(p), nil }

// TestReaderInvalidCount: a source that returns a negative count or more than it was
// offered is an error of ReadLine (sticky), not a panic or a line made of bytes that
// were never read: the Reader is fed by the network and by tests' fakes alike.
func TestReaderInvalidCount(t *testing.T) {
	for name, n := range map[string]func([]byte) int{
		"negative":       func([]byte) int { return -1 },
		"one too many":   func(p []byte) int { return len(p) + 1 },
		"far too many":   func(p []byte) int { return 1 << 30 },
		"minimum int":    func([]byte) int { return math.MinInt },
		"negative later": func(p []byte) int { copy(p, "ab"); return -2 },
		"too many later": func() func([]byte) int {
			calls := 0
			return func(p []byte) int {
				calls++
				if calls == 1 {
					return copy(p, "ab") // no LF: the next read appends
				}
				return len(p) + 1
			}
		}(),
	} {
		r := NewReader(badCountReader{n})
		for i := 0; i < 2; i++ {
			line, err := r.ReadLine()
			if err == nil || !strings.Contains(err.Error(), "invalid count") || errors.Is(err, io.EOF) {
				t.Errorf("%s: ReadLine = %q, %v; want the invalid count error", name, line, err)
			}
		}
	}
	// The bounds themselves are valid counts: 0 (then data) and exactly len(p).
	full := 0
	r := NewReader(badCountReader{func(p []byte) int {
		full++
		switch full {
		case 1:
			return 0
		case 2:
			copy(p, bytes.Repeat([]byte("z"), len(p)))
			p[len(p)-1] = '\n'
			return len(p)
		}
		return 0
	}})
	if line, err := r.ReadLine(); err != nil || len(line) != 8<<10-1 {
		t.Errorf("a read of 0 then a read of exactly len(p): %d bytes, %v", len(line), err)
	}
}
