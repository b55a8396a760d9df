package proto

import (
	"io"
	"strings"
	"testing"
)

// The Reader's buffer starts small, grows only for long lines, and never exceeds the
// limit plus one read, whatever the peer sends.
func TestReaderMemoryBounded(t *testing.T) {
	r := NewReader(strings.NewReader("short\n" + strings.Repeat("y", 10<<20) + "\n" + strings.Repeat("z", LineBytesMax) + "\nend\n"))
	var lines int
	for {
		_, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		lines++
		if len(r.buf) > r.bufBytesMax() {
			t.Fatalf("buffer grew to %d bytes, bound %d", len(r.buf), r.bufBytesMax())
		}
		if lines == 1 && len(r.buf) != readerBytesInitial {
			t.Fatalf("buffer is %d bytes after a short line, want %d", len(r.buf), readerBytesInitial)
		}
	}
	if lines != 4 {
		t.Fatalf("read %d lines and errors, want 4", lines)
	}
	if r.bufBytesMax() != LineBytesMax+2+readBytesMin {
		t.Fatalf("bufBytesMax = %d", r.bufBytesMax())
	}
}
