//go:build adversary_weak_socket

package server

func init() { weakened.socket = true }
