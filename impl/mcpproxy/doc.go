// Package mcpproxy is the gate between an MCP host and one MCP server: an MCP server
// to the host, an MCP client of the upstream, and an agent of the gate. Every
// tools/call is an effect asked of the gate at its commit point, the forward to the
// upstream: admit forwards it once and completes the effect with a record of the
// result; duplicate answers from the record; denied and held forward nothing.
//
// The decisions are pure and tested alone: the policy (Policy, ParsePolicy), the key
// of a call (CallTarget, CanonicalJSON, DigestKey), the record of a result and its
// replay (Record). Proxy does the I/O with the official Go SDK. soundgate mcp-proxy
// is the command (docs/integrations/mcp.md).
package mcpproxy
