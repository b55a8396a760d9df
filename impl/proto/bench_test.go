package proto_test

import (
	"bytes"
	"testing"

	. "github.com/soundgate/soundgate/impl/proto"
	"github.com/soundgate/soundgate/impl/proto/protoref"
)

var (
	admitLine      = []byte(`{"jsonrpc":"2.0","id":42,"method":"admit","params":{"run":"run-7f3a","key":"send-email:step-12:4b1d","epoch":1,"gated":true,"wait_ms":30000}}`)
	completeLine   = []byte(`{"jsonrpc":"2.0","id":"c-9","method":"complete","params":{"run":"run-7f3a","key":"send-email:step-12:4b1d","outcome":"ok","result":"250 2.0.0 OK queued as 4b1d"}}`)
	badAdmitLine   = []byte(`{"jsonrpc":"2.0","id":42,"method":"admit","params":{"run":"run-7f3a","key":"send-email","epoch":"1"}}`)
	admitRequest   = Request{ID: IntID(42), Method: MethodAdmit, Run: "run-7f3a", Key: "send-email:step-12:4b1d", Epoch: 1, Gated: true, WaitMs: 30000}
	admitAnswerRes = AdmitResult{Answer: 1, Epoch: 1}
)

// BenchmarkDecodeAdmit measures the hot path: one admit line into a reused Request.
func BenchmarkDecodeAdmit(b *testing.B) {
	benchDecode(b, admitLine, false)
}

// BenchmarkDecodeComplete measures a line with a result string.
func BenchmarkDecodeComplete(b *testing.B) {
	benchDecode(b, completeLine, false)
}

// BenchmarkDecodeBadAdmit measures a refused line (the error path allocates its error).
func BenchmarkDecodeBadAdmit(b *testing.B) {
	benchDecode(b, badAdmitLine, true)
}

// benchDecode decodes line into a reused Request, which must fail if refused is set.
func benchDecode(b *testing.B, line []byte, refused bool) {
	var d Decoder
	var r Request
	defer measure(b, len(line))()
	for b.Loop() {
		if err := d.Decode(line, &r); (err != nil) != refused {
			b.Fatalf("Decode(%s) = %v", line, err)
		}
	}
}

// measure makes b report allocations and, for size > 0, the bytes of one operation;
// the function it returns, deferred, adds cpu-ns/op. That is the process's CPU time
// per operation: the benchmarks run single-goroutine, so on a loaded machine it is
// close to the operation's cost while ns/op (wall time) also counts the time the CPU
// was elsewhere. (It includes the garbage collector's work, which the operation causes.)
func measure(b *testing.B, size int) (stop func()) {
	b.ReportAllocs()
	b.SetBytes(int64(size))
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkReferenceDecodeAdmit is the encoding/json reference, for comparison only.
func BenchmarkReferenceDecodeAdmit(b *testing.B) {
	defer measure(b, len(admitLine))()
	for b.Loop() {
		if _, err := protoref.Decode(admitLine); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadAndDecodeAdmit is a stream of admit lines through Reader and Decoder.
func BenchmarkReadAndDecodeAdmit(b *testing.B) {
	const n = 1024
	stream := bytes.Repeat(append(append([]byte{}, admitLine...), '\n'), n)
	var d Decoder
	var req Request
	defer measure(b, len(stream))()
	for b.Loop() {
		r := NewReader(bytes.NewReader(stream))
		for i := 0; i < n; i++ {
			line, err := r.ReadLine()
			if err != nil {
				b.Fatal(err)
			}
			if err := d.Decode(line, &req); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkEncodeAdmit measures AppendRequest into a reused buffer.
func BenchmarkEncodeAdmit(b *testing.B) {
	buf := make([]byte, 0, 512)
	defer measure(b, 0)()
	for b.Loop() {
		buf = AppendRequest(buf[:0], &admitRequest)
	}
}

// BenchmarkEncodeAdmitAnswer measures AppendResult of an admit answer.
func BenchmarkEncodeAdmitAnswer(b *testing.B) {
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendResult(buf[:0], IntID(42), &admitAnswerRes)
	}
}

// TestDecodeAllocs holds the allocation budget of the hot path: one string per request.
func TestDecodeAllocs(t *testing.T) {
	var d Decoder
	var r Request
	for _, line := range [][]byte{admitLine, completeLine} {
		allocs := testing.AllocsPerRun(200, func() {
			if err := d.Decode(line, &r); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 1 {
			t.Errorf("Decode of %s: %.1f allocations, budget 1", line, allocs)
		}
	}
	buf := make([]byte, 0, 512)
	if allocs := testing.AllocsPerRun(200, func() { buf = AppendRequest(buf[:0], &admitRequest) }); allocs != 0 {
		t.Errorf("AppendRequest: %.1f allocations, want 0", allocs)
	}
}
