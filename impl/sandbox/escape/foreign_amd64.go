package escape

// int80 makes an i386 system call through int 0x80 (defined in foreign_amd64.s).
func int80(nr uintptr) uintptr

// foreignGetpid calls getpid (20 in the i386 table) through int 0x80.
func foreignGetpid() (int, bool) { return int(int80(20)), true }

// foreignArchProbed reports whether this architecture has a foreign-arch probe.
const foreignArchProbed = true
