package harness

import (
	"context"
	"errors"
)

// GateAvailable reports why the mediated variant cannot run ("" when it can).
func GateAvailable() string { return "the gate's Go client is not wired into the probes yet" }

// NewMediated returns a mediated environment for probe id.
func NewMediated(ctx context.Context, id string) (*Unmodified, error) {
	return nil, errors.New("soundgate/probes: mediated variant not available")
}
func (u *Unmodified) Close() {}
