package core

// Limits bound everything the core stores, so that no caller can grow the gate without
// bound. Each limit, when reached, is a typed error that changes nothing.
type Limits struct {
	RunsMax          int // runs known to the gate, tombstones included, retired ones not
	RetiredMax       int // retired runs (each costs its id's bytes and 4 more)
	KeysPerRunMax    int // effects of one run that are not absent
	PendingPerRunMax int // open approvals of one run
	RunBytesMax      int // bytes of a run id
	KeyBytesMax      int // bytes of an idempotency key
	ResultBytesMax   int // bytes of a completed effect's result
	// StateBytesMax is the memory budget of the state: the bytes StateBytes counts
	// for every run and effect the gate holds (not the retired ids: RetiredMax).
	StateBytesMax int64
}

// DefaultLimits are the limits of `soundgate serve` unless flags change them.
func DefaultLimits() Limits {
	return Limits{
		RunsMax:          1 << 20,
		RetiredMax:       1 << 26,
		KeysPerRunMax:    1 << 16,
		PendingPerRunMax: 1 << 10,
		RunBytesMax:      128,
		KeyBytesMax:      256,
		ResultBytesMax:   16 << 10,
		StateBytesMax:    1 << 30,
	}
}
