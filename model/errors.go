package model

import "errors"

// The model's own errors (not answers of the contract).
var (
	// ErrConfig: the constants do not describe a model the explorer can run.
	ErrConfig = errors.New("soundgate/model: bad config")
	// ErrDomain: an operation names a run, key or value outside the Config's domains.
	ErrDomain = errors.New("soundgate/model: operation outside the model's domain")
)
