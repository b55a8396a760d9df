package proto_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/impl/proto"
)

// A server's read loop: lines from a Reader, each decoded into a reused Request, each
// answered, bad lines with the error answer that carries their id.
func Example() {
	in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"admit","params":{"run":"r1","key":"send-email","epoch":1}}` + "\r\n" +
		`{"jsonrpc":"2.0","id":2,"method":"admit","params":{"run":"r1","key":"send-email","epoch":"1"}}` + "\n" +
		"not json\n")
	r := proto.NewReader(in)
	var dec proto.Decoder
	var req proto.Request
	var out []byte
	for {
		line, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil { // an oversize line: answer it and go on
			out = proto.AppendError(out, proto.ID{}, err)
			continue
		}
		if err := dec.Decode(line, &req); err != nil {
			out = proto.AppendError(out, req.ID, err)
			continue
		}
		// ... authorise, then ask the core ...
		out = proto.AppendResult(out, req.ID, &proto.AdmitResult{Answer: core.AnswerAdmit, Epoch: req.Epoch})
	}
	os.Stdout.Write(out)
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"answer":"admit","epoch":1}}
	// {"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"wrong type: params.epoch: must be an integer (at byte 89)","data":{"type":"wrong_type","field":"params.epoch"}}}
	// {"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error (at byte 0)","data":{"type":"parse_error"}}}
}

// A client encodes a request and reads its answer back.
func ExampleAppendRequest() {
	req := proto.Request{ID: proto.IntID(7), Method: proto.MethodAdmit, Run: "r1", Key: "wire-money", Epoch: 1, Gated: true, WaitMs: 30000}
	os.Stdout.Write(proto.AppendRequest(nil, &req))

	resp, _ := proto.DecodeResponse([]byte(`{"jsonrpc":"2.0","id":7,"result":{"answer":"denied","reason":"rejected","epoch":1}}`))
	var res proto.AdmitResult
	_ = res.UnmarshalJSON(resp.Result)
	fmt.Println(resp.ID, res.Answer, res.Reason)
	// Output:
	// {"jsonrpc":"2.0","id":7,"method":"admit","params":{"run":"r1","key":"wire-money","epoch":1,"gated":true,"wait_ms":30000}}
	// 7 denied rejected
}

// Every decoding failure is one typed error; errors.Is tells the kind and errors.As
// gives the id and the field.
func ExampleDecodeError() {
	_, err := proto.Decode([]byte(`{"jsonrpc":"2.0","id":"a","method":"open","params":{"run":"r","epoch":1}}`))
	var de *proto.DecodeError
	fmt.Println(errors.Is(err, proto.ErrUnknownField), errors.As(err, &de), de.ID, de.Field)
	// Output:
	// true true "a" params.epoch
}
