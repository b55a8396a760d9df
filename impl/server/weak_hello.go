//go:build adversary_weak_hello

package server

func init() { weakened.hello = true }
