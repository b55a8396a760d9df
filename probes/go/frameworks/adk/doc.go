// Package adk holds the barrier probes for Google's Agent Development Kit for
// Go (google.golang.org/adk): a function tool with RequireConfirmation called
// in parallel with another tool by one scripted model turn; the human answers
// the adk_request_confirmation call with a FunctionResponse.
package adk
