package adk
import "github.com/soundgate/soundgate/probes/go/harness"
func Confirmation() harness.Framework { return harness.Framework{Name: "ADK", ID: "adk"} }
