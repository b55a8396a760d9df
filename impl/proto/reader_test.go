package proto_test

import (
	"errors"
	"io"
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
// of L bytes costs O(log L) allocations and copies, not O(L / 4 KiB) (growing by one
// read at a time copied a 64 KiB line 14 times: found by the mutation score).
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
			for i := 0; ; i++ {
				if i > 1000 {
					t.Fatal("ReadLine never reached EOF")
				}
				line, err := r.ReadLine()
				if errors.Is(err, ErrWouldBlock) {
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
		})
	}
}
