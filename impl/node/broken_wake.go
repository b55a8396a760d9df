//go:build broken_wake

package node

const brokenWake = true
