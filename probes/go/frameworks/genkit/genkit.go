package genkit
import "github.com/soundgate/soundgate/probes/go/harness"
func Interrupts() harness.Framework { return harness.Framework{Name: "Genkit", ID: "genkit"} }
