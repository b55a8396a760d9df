//go:build !linux

package main

import (
	"errors"
	"time"
)

// rawLoopAvailable: without epoll, each raw connection has its own goroutine.
const rawLoopAvailable = false

type benchSource struct{}

func rawLoop([]*rawDriver, time.Time) (map[string][]time.Duration, error) {
	return nil, errors.New("no event loop on this platform")
}
