package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// LandlockABIMin is the oldest Landlock ABI the sandbox runs with: 4 brought TCP
// connect rules, 5 ioctl rights on devices, 6 the scopes that stop signals and
// abstract Unix sockets from leaving the domain. Start refuses to run below it.
const LandlockABIMin = 6

// landlockConfig is the Landlock configuration at LandlockABIMin, strict: the
// library refuses rather than silently dropping rights on an older kernel.
var landlockConfig = landlock.V6

// devFiles are the device files the agent may open for writing.
var devFiles = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// restrictSelf drops the capabilities of every thread, sets no_new_privs, and
// enforces Landlock and seccomp on the whole process; the agent inherits all of it
// across fork and execve. Called by the sandbox init after the mount view is built.
func restrictSelf(c *initConfig) error {
	if err := dropCapabilities(); err != nil {
		return err
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); err != nil {
		return fmt.Errorf("soundgate/sandbox: no_new_privs: %w", err)
	}
	if !c.Disable.Landlock {
		writable := c.Writable
		if c.Tmp {
			writable = append([]string{"/tmp"}, writable...)
		}
		err := landlockConfig.Restrict(
			landlock.RODirs("/"),
			landlock.RWDirs(writable...),
			landlock.RWFiles(devFiles...).IgnoreIfMissing(),
			landlock.ConnectTCP(uint16(c.ProxyPort)),
		)
		if err != nil {
			return fmt.Errorf("soundgate/sandbox: landlock: %w", err)
		}
	}
	if !c.Disable.Seccomp {
		if err := installSeccomp(); err != nil {
			return err
		}
	}
	return nil
}

// allThreads runs a system call on every thread of the process; the arguments
// after a3 are zero (prctl checks them).
func allThreads(nr, a1, a2, a3 uintptr) error {
	if _, _, e := psx.Syscall6(nr, a1, a2, a3, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}

// dropCapabilities leaves no capability in any set of any thread, and locks the
// secure bits so that an execve as uid 0 does not hand them back.
func dropCapabilities() error {
	// The secure bits of linux/securebits.h: noroot, no_setuid_fixup and
	// no_cap_ambient_raise, each locked, and keep_caps locked off.
	const (
		noRoot, noRootLocked             = 1 << 0, 1 << 1
		noSetuidFixup, noSetuidFixupLock = 1 << 2, 1 << 3
		keepCapsLocked                   = 1 << 5
		noAmbientRaise, noAmbientLocked  = 1 << 6, 1 << 7
		secbits                          = noRoot | noRootLocked | noSetuidFixup | noSetuidFixupLock |
			keepCapsLocked | noAmbientRaise | noAmbientLocked
	)
	if err := allThreads(unix.SYS_PRCTL, unix.PR_SET_SECUREBITS, secbits, 0); err != nil {
		return fmt.Errorf("soundgate/sandbox: securebits: %w", err)
	}
	last, err := lastCap()
	if err != nil {
		return err
	}
	for c := 0; c <= last; c++ {
		if err := allThreads(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); err != nil {
			return fmt.Errorf("soundgate/sandbox: drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := allThreads(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0); err != nil {
		return fmt.Errorf("soundgate/sandbox: clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := allThreads(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); err != nil {
		return fmt.Errorf("soundgate/sandbox: capset: %w", err)
	}
	return nil
}

func lastCap() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("soundgate/sandbox: %w", err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 || n > 63 {
		return 0, fmt.Errorf("soundgate/sandbox: cap_last_cap %q", b)
	}
	return n, nil
}

// Kernel describes what this kernel offers the sandbox.
type Kernel struct {
	// LandlockABI is the kernel's Landlock ABI version (0: none).
	LandlockABI int
	// Seccomp reports whether seccomp filters are available.
	Seccomp bool
	// UserNS reports whether user namespaces can be created.
	UserNS bool
}

// ProbeKernel reports what the running kernel offers.
func ProbeKernel() Kernel {
	var k Kernel
	if v, err := llsys.LandlockGetABIVersion(); err == nil {
		k.LandlockABI = v
	}
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err == nil {
		k.Seccomp = true
	}
	if b, err := os.ReadFile("/proc/sys/user/max_user_namespaces"); err == nil {
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		k.UserNS = n > 0
	}
	return k
}

// Check returns ErrKernel, saying what is missing, unless k offers what a sandbox
// with the layers d switched off needs.
func (k Kernel) Check(d Layers) error {
	var missing []string
	if !k.UserNS {
		missing = append(missing, "user namespaces")
	}
	if !d.Landlock && k.LandlockABI < LandlockABIMin {
		missing = append(missing, fmt.Sprintf("Landlock ABI %d (have %d)", LandlockABIMin, k.LandlockABI))
	}
	if !d.Seccomp && !k.Seccomp {
		missing = append(missing, "seccomp")
	}
	if auditArch == 0 {
		missing = append(missing, "a seccomp filter for "+syscallArch())
	}
	if len(missing) > 0 {
		return wrap(ErrKernel, nil, "%s", strings.Join(missing, ", "))
	}
	return nil
}

func syscallArch() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "this architecture"
	}
	b := make([]byte, 0, len(u.Machine))
	for _, c := range u.Machine {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
