package client

import (
	"bytes"
	"context"
	"net"

	"github.com/soundgate/soundgate/impl/proto"
)

// The internals that the package's external tests look at.

// NewForTest returns a client over nc that has not said hello yet.
func NewForTest(nc net.Conn) *Client { return newClient(nc) }

// HelloForTest says hello with token, as Dial does.
func (c *Client) HelloForTest(ctx context.Context, token string) error {
	var hello proto.HelloResult
	if err := c.call(ctx, &proto.Request{Method: proto.MethodHello, Version: proto.Version, Token: token}, &hello); err != nil {
		return err
	}
	c.Role = hello.Role
	return nil
}

// QueuedLines returns how many request lines wait behind the write in progress.
func (c *Client) QueuedLines() int {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return bytes.Count(c.pend, []byte("\n"))
}

// ConnForTest returns the client's connection.
func (c *Client) ConnForTest() net.Conn { return c.nc }

// Flushing reports whether a call is writing the queued lines now.
func (c *Client) Flushing() bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	return c.flushing
}

// BreakForTest breaks the client as a failed read or write does.
func (c *Client) BreakForTest(cause error) { c.broken(cause) }
