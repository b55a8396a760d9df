//go:build adversary_weak_idle

package server

func init() { weakened.idle = true }
