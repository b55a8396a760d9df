package tlacheck

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// residentBytes is the process's resident set size from /proc/self/statm (Linux); 0
// where it cannot be read.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// residentNote is the progress line's resident size and its bytes per distinct state
// ("" where the size cannot be read).
func residentNote(distinct int) string {
	rss := residentBytes()
	if rss == 0 {
		return ""
	}
	return fmt.Sprintf("; resident %d MiB, %.0f bytes per distinct state", rss>>20, float64(rss)/float64(max(distinct, 1)))
}
