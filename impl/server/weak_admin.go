//go:build adversary_weak_admin

package server

func init() { weakened.admin = true }
