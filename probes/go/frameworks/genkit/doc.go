// Package genkit holds the barrier probes for Genkit for Go
// (github.com/firebase/genkit/go): a tool that interrupts (ToolContext.Interrupt)
// in a model turn that requests two tools in parallel; the human's decision
// restarts the interrupted request (approve) or responds to it (reject).
package genkit
