//go:build failpoints

package wal

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// Failpoints reports whether this binary was built with the failpoints tag.
const Failpoints = true

// FailpointEnv names the environment variable that arms a failpoint in a binary
// built with -tags failpoints: "NAME:N" kills the process with SIGKILL the N-th time
// (N >= 1) execution reaches the failpoint NAME. Names: "wal-after-write" (records
// written, not yet fdatasynced) and "wal-after-sync" (fdatasynced, not yet
// acknowledged).
const FailpointEnv = "SOUNDGATE_FAILPOINT"

var (
	fpName  string
	fpAt    int64
	fpCount atomic.Int64
)

func init() {
	v := os.Getenv(FailpointEnv)
	if v == "" {
		return
	}
	name, n, ok := strings.Cut(v, ":")
	at, err := strconv.ParseInt(n, 10, 64)
	if !ok || err != nil || at < 1 || (name != failpointAfterWrite && name != failpointAfterSync) {
		// A harness that believes a failpoint is armed must not run unarmed.
		panic("soundgate/wal: bad " + FailpointEnv + "=" + strconv.Quote(v) +
			`: want "wal-after-write:N" or "wal-after-sync:N" with N >= 1`)
	}
	fpName, fpAt = name, at
}

// failpoint kills the process at the armed failpoint: a crash at a chosen point.
func failpoint(name string) {
	if name != fpName || fpCount.Add(1) != fpAt {
		return
	}
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // SIGKILL is not deliverable late; never return into the log
}
