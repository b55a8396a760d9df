//go:build !unix

package tlacheck

import "time"

// cpuTime is unavailable here; benchmarks then report wall-clock rates only.
func cpuTime() time.Duration { return 0 }
