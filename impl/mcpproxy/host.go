package mcpproxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HostLineBytesMax bounds one line from the host: arguments up to ArgsBytesMax, even
// with every byte escaped, and the request around them.
const HostLineBytesMax = 6*ArgsBytesMax + 64<<10

// HostTransport is the host's side over a byte stream (the proxy's stdin and stdout),
// with a line filter in front of the SDK: the SDK's stdio transport ends the session
// at the first line that is not a JSON-RPC message, so a host's one bad line would
// cut it off. The filter answers such a line with a JSON-RPC error instead (-32700 not
// JSON, -32600 not a message, a batch, or longer than HostLineBytesMax; id null unless
// one could be read) and passes the next lines on. Made by Proxy.HostTransport, it also
// numbers each tools/call as it arrives, so that the proxy asks the gate in the order
// the host sent the calls (arrivals).
type HostTransport struct {
	In    io.Reader
	Out   io.Writer
	order *arrivals // nil: calls are asked of the gate in whatever order they are handled
}

// HostTransport returns the host's side of p over a byte stream (its stdin and stdout).
func (p *Proxy) HostTransport(in io.Reader, out io.Writer) *HostTransport {
	return &HostTransport{In: in, Out: out, order: p.order}
}

// Connect implements mcp.Transport.
func (h *HostTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	out := &lockedWriter{w: h.Out, order: h.order}
	go filterLines(h.In, pw, out, h.order)
	return (&mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}).Connect(ctx)
}

// lockedWriter writes each Write whole, so that the filter's error lines never split a
// line of the SDK's (it writes one message per Write), and tells order of the
// responses it carries.
type lockedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	order *arrivals
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l.order != nil {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(p, &m) == nil && m.Method == "" && len(m.ID) > 0 && string(m.ID) != "null" {
			defer l.order.answered(m.ID)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil } // the proxy's stdout outlives the session

// filterLines copies the lines of in that are JSON-RPC messages to sdk and answers the
// others on out, until in ends (then sdk ends); order (if not nil) numbers the
// tools/calls.
func filterLines(in io.Reader, sdk *io.PipeWriter, out io.Writer, order *arrivals) {
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, tooLong, err := readLine(r, HostLineBytesMax)
		switch {
		case tooLong:
			writeLineError(out, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("line longer than %d bytes: discarded unread", HostLineBytesMax))
		case len(bytes.TrimSpace(line)) == 0:
		default:
			id, code, msg := checkLine(line)
			if code != 0 {
				writeLineError(out, id, code, msg)
				break
			}
			if callID, ok := toolCallID(line); ok && order != nil {
				line = order.arrive(line, callID)
			}
			if _, werr := sdk.Write(append(line, '\n')); werr != nil {
				return // the session is closed
			}
		}
		if err != nil {
			sdk.CloseWithError(io.EOF)
			return
		}
	}
}

// readLine reads up to LF; a line over limit is consumed to its LF and reported
// tooLong. err is set at the end of the input (a last line without LF is returned).
func readLine(r *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+1 {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// checkLine says whether line is one JSON-RPC message the SDK will read; if not, the
// error to answer (code and message) and the id to answer it with, if one was read.
func checkLine(line []byte) (id any, code int64, msg string) {
	if !json.Valid(line) {
		return nil, jsonrpc.CodeParseError, "parse error: the line is not JSON"
	}
	var probe struct {
		ID any `json:"id"`
	}
	if t := bytes.TrimSpace(line); t[0] != '{' {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: not a JSON object (batches are not supported)"
	}
	if json.Unmarshal(line, &probe) == nil {
		if _, err := jsonrpc.MakeID(probe.ID); err == nil {
			id = probe.ID
		}
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
	}
	return nil, 0, ""
}

// toolCallID returns the id of a JSON-RPC message line that is a tools/call request.
func toolCallID(line []byte) (json.RawMessage, bool) {
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	ok := json.Unmarshal(line, &m) == nil && m.Method == "tools/call" && len(m.ID) > 0 && string(m.ID) != "null"
	return m.ID, ok
}

func writeLineError(out io.Writer, id any, code int64, msg string) {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	out.Write(append(b, '\n'))
}
