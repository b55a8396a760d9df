//go:build adversary_weak_quota

package server

func init() { weakened.quota = true }
