//go:build !unix

package proto_test

import "time"

// cpuTime is unavailable here; benchmarks then report 0 cpu-ns/op.
func cpuTime() time.Duration { return 0 }
