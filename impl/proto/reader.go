package proto

import (
	"bytes"
	"errors"
	"io"
)

// readBytesMin is the smallest read the Reader asks of its source.
const readBytesMin = 4 << 10

// readerBytesInitial is the Reader's first buffer; it grows only for long lines.
const readerBytesInitial = 8 << 10

// emptyReadsMax bounds consecutive reads that return no byte and no error.
const emptyReadsMax = 100

// Reader splits a byte stream into request lines. A line ends with LF or CRLF; the
// terminator is not part of the line. Lines that are empty or hold only spaces and tabs
// are skipped (a person typing into nc may press enter twice). A line longer than
// LineBytesMax is never held in memory: it is discarded up to its LF and reported as a
// *DecodeError wrapping ErrLineTooLong, and the next call goes on with the next line.
// The Reader's memory starts at 8 KiB and is bounded by the line limit plus one read.
type Reader struct {
	src   io.Reader
	max   int // the line limit, 1..LineBytesMax (AnswerLineBytesMax for answers)
	buf   []byte
	start int // first unread byte in buf
	end   int // end of buffered bytes
	err   error
	// discarding: an oversize line is being dropped up to its LF. A field, not a
	// local of ReadLine, so that a non-blocking source (ErrWouldBlock) can leave in
	// the middle of a long line and the next call goes on discarding it.
	discarding bool
}

// ErrWouldBlock is what a non-blocking source returns from Read when it has no
// bytes now but may have later (a socket read only when the event loop says it is
// readable). ReadLine then returns it, keeps every byte and its state, and a later
// call goes on where it stopped: unlike other errors it is not sticky.
var ErrWouldBlock = errors.New("soundgate/proto: the source has no bytes now")

// NewReader returns a Reader that reads lines of up to LineBytesMax bytes from src.
func NewReader(src io.Reader) *Reader {
	return &Reader{src: src, max: LineBytesMax}
}

// NewAnswerReader returns a Reader of a server's answers, whose lines may be longer
// than requests: up to AnswerLineBytesMax.
func NewAnswerReader(src io.Reader) *Reader {
	return &Reader{src: src, max: AnswerLineBytesMax}
}

// NewReaderSize returns a Reader whose line limit is lineBytesMax, clamped to
// 1..LineBytesMax: a server may accept less than the protocol allows, and tests use a
// small limit to reach the oversize path cheaply.
func NewReaderSize(src io.Reader, lineBytesMax int) *Reader {
	return &Reader{src: src, max: min(max(lineBytesMax, 1), LineBytesMax)}
}

// ReadLine returns the next line, without its terminator. The slice is valid until the
// next call. Errors: a *DecodeError for an oversize line (the stream continues), the
// source's error (io.EOF at the end; a last line without LF is returned before io.EOF,
// but dropped before any other error: a broken connection executes no partial line), or
// io.ErrNoProgress if the source keeps returning nothing.
func (r *Reader) ReadLine() ([]byte, error) {
	if r.buf == nil {
		if r.max <= 0 || r.max > AnswerLineBytesMax { // a Reader not made by its constructors
			r.max = LineBytesMax
		}
		r.buf = make([]byte, min(r.bufBytesMax(), readerBytesInitial))
	}
	scanned := r.start // bytes before scanned hold no LF
	for {
		if i := indexLF(r.buf[scanned:r.end]); i >= 0 {
			lf := scanned + i
			line := r.buf[r.start:lf]
			r.start = lf + 1
			scanned = r.start
			if r.discarding {
				r.discarding = false
				return nil, tooLong()
			}
			line = trimCR(line)
			if len(line) > r.max {
				return nil, tooLong()
			}
			if blank(line) {
				continue
			}
			return line, nil
		}
		scanned = r.end
		// No LF buffered. A pending line longer than the limit + 1 (its content and
		// a CR) can never be valid: drop what we hold and discard up to the next LF.
		if r.end-r.start > r.max+1 {
			r.discarding = true
			r.start, r.end, scanned = 0, 0, 0
		}
		if r.err != nil {
			if r.start < r.end && !r.discarding && r.err == io.EOF { // last line without LF
				line := trimCR(r.buf[r.start:r.end])
				r.start = r.end
				if len(line) > r.max {
					return nil, tooLong()
				}
				if !blank(line) {
					return line, nil
				}
			}
			if r.discarding {
				r.discarding = false
				r.start, r.end = 0, 0
				return nil, tooLong()
			}
			return nil, r.err
		}
		if r.start > 0 && len(r.buf)-r.end < readBytesMin {
			n := copy(r.buf, r.buf[r.start:r.end])
			scanned -= r.start
			r.start, r.end = 0, n
		}
		if len(r.buf)-r.end < readBytesMin && len(r.buf) < r.bufBytesMax() {
			// A long line: grow, never beyond the limit plus one read.
			grown := make([]byte, min(max(2*len(r.buf), r.end+readBytesMin), r.bufBytesMax()))
			copy(grown, r.buf[:r.end])
			r.buf = grown
		}
		if !r.fill() {
			return nil, ErrWouldBlock
		}
	}
}

// Buffered returns how many bytes the Reader holds that ReadLine has not returned
// yet: a server answers directly when its peer has sent nothing more.
func (r *Reader) Buffered() int { return r.end - r.start }

// bufBytesMax is the largest buffer the Reader uses: a line at the limit, CR, LF and
// one read. While lines are short the buffer stays at readerBytesInitial.
func (r *Reader) bufBytesMax() int { return r.max + 2 + readBytesMin }

// fill reads once into the free tail of buf, recording a sticky error. It reports
// false when the source has nothing now (ErrWouldBlock, with no bytes): not an error.
func (r *Reader) fill() bool {
	for empty := 0; empty < emptyReadsMax; empty++ {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.err = errors.New("soundgate/proto: source returned an invalid count")
			return true
		}
		r.end += n
		if err == ErrWouldBlock && n == 0 {
			return false
		}
		if err != nil {
			r.err = err
			return true
		}
		if n > 0 {
			return true
		}
	}
	r.err = io.ErrNoProgress
	return true
}

func tooLong() error {
	return &DecodeError{Err: ErrLineTooLong, Offset: -1, Detail: "line over the limit, discarded up to its newline"}
}

func indexLF(b []byte) int { return bytes.IndexByte(b, '\n') }

func trimCR(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\r' {
		return b[:n-1]
	}
	return b
}

func blank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}
