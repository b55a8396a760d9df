//go:build adversary_weak_display

package main

func init() { weakDisplay = true }
