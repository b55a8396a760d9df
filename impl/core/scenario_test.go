package core_test

import (
	"testing"

	"github.com/soundgate/soundgate/impl/core"
	"github.com/soundgate/soundgate/internal/scenario"
)

// TestScenarios runs the contract's scenario files against the core itself.
func TestScenarios(t *testing.T) {
	scenario.Run(t, "../../"+scenario.Dir, func(*testing.T) scenario.Driver {
		return &coreDriver{g: core.New(core.DefaultLimits())}
	})
}

// coreDriver runs scenarios directly against a core.Gate, with the scenario's clock.
type coreDriver struct {
	g   *core.Gate
	now core.Time
}

func (d *coreDriver) Step(c core.Command) core.Reply { return d.g.Step(c) }
func (d *coreDriver) SetClock(now core.Time)         { d.now = now }
func (d *coreDriver) TimeoutDue() []core.RunID       { return timeoutDue(d.g, d.now) }
func (d *coreDriver) Retire(c core.Command) core.Reply {
	c.Now = d.now
	return d.g.Step(c)
}
