//go:build adversary_weak_reserve

package server

func init() { weakened.reserve = true }
