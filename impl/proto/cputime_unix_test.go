//go:build unix

package proto_test

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) this process has used. On a shared
// machine it is a steadier measure of a benchmark's cost than wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
