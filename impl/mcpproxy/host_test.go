package mcpproxy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// send writes one line from the host and, if want is not "", reads the next line the
// proxy writes and checks it contains want.
func (e *env) send(t *testing.T, line, want string) string {
	t.Helper()
	_, err := e.rawIn.Write([]byte(line + "\n"))
	require.NoError(t, err)
	if want == "" {
		return ""
	}
	l := e.readLine(t)
	require.Contains(t, l, want, "answer to %s", line)
	return l
}

// readLine reads the next line the proxy writes to the raw host.
func (e *env) readLine(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := e.rawOut.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no line from the proxy within 10 s")
	}
	return ""
}

// TestHostBadLines: lines a host should never send (not JSON, not a message, a batch,
// an unknown method, an argument named twice) each get a clear JSON-RPC or tool error,
// nothing is forwarded, and the session goes on: the next call works.
func TestHostBadLines(t *testing.T) {
	e := newEnv(t, envOptions{rawHost: true})
	e.send(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, `"id":1,"result"`)
	e.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`, "")
	e.send(t, `hello gate`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error`)
	e.send(t, `{"jsonrpc":"2.0","id":2,"method":"tools/frobnicate","params":{}}`, `"id":2,"error":{"code":-32601`)
	e.send(t, `{"foo":1,"id":3}`, `{"jsonrpc":"2.0","id":3,"error":{"code":-32600`)
	e.send(t, `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`, `"id":null,"error":{"code":-32600,"message":"invalid request: not a JSON object (batches are not supported)"`)
	e.send(t, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"note","arguments":{"text":"a","text":"b"}}}`, `arguments name \"text\" twice`)
	e.send(t, `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"note","arguments":{"text":"ok"}}}`, `noted 1`)
	e.send(t, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, `"id":7,"result":{}`)
	l := e.send(t, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"note","arguments":{"text":"`+strings.Repeat("x", ArgsBytesMax)+`"}}}`, `"id":8`)
	var resp struct {
		Result struct {
			IsError bool `json:"isError"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(l), &resp))
	require.True(t, resp.Result.IsError)
	require.Contains(t, l, "over the proxy's limit")
	e.send(t, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"note","arguments":{"text":"`+strings.Repeat("x", HostLineBytesMax)+`"}}}`, `"id":null,"error":{"code":-32600,"message":"line longer than`)
	e.send(t, `{"jsonrpc":"2.0","id":10,"method":"ping"}`, `"id":10,"result":{}`)
	require.Equal(t, []string{"note:ok"}, e.world.list())
	require.NoError(t, e.rawIn.Close())
	select {
	case <-e.proxyDone:
		require.NoError(t, e.proxyErr)
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy did not return after the host closed its side")
	}
}
