package core_test

import (
	"testing"

	"github.com/soundgate/soundgate/internal/scenario"
)

// TestScenarios runs the contract's scenario files against the core.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "../../"+scenario.Dir, scenario.NewCoreDriver)
}
