//go:build adversary_weak_roles

package server

func init() { weakened.roles = true }
