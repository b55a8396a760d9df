// Package eino holds the barrier probes for Eino (github.com/cloudwego/eino):
// compose.Interrupt with checkpointed resume in a graph whose two nodes run in
// the same step, and the ToolsNode running the parallel tool calls of one
// model message.
package eino
