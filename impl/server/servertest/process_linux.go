//go:build linux

package servertest

import "syscall"

// dieWithParent makes the server process die when the harness does (a crashed test
// must not leave a gate behind).
func dieWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
