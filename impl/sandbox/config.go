package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Limits of a sandbox configuration and of its start-up.
const (
	// PathsMax bounds Config.Writable plus Config.ReadOnly.
	PathsMax = 64
	// ArgvMax bounds the number of arguments of the agent.
	ArgvMax = 4096
	// ConfigBytesMax bounds the encoded configuration handed to the sandbox init.
	ConfigBytesMax = 1 << 20
	// DefaultProxyPort is the TCP port of the proxy listener inside the namespace.
	DefaultProxyPort = 3128
	// tmpSizeBytes bounds the private, writable /tmp of the agent.
	tmpSizeBytes = 256 << 20
)

// Layers names the enforcement layers that Config.Disable can switch off.
type Layers struct {
	// Seccomp: no seccomp filter.
	Seccomp bool
	// Landlock: no Landlock domain (file system, TCP ports, scopes).
	Landlock bool
	// NetNS: no network namespace; the proxy listens on the host's loopback.
	NetNS bool
	// ReadOnlyRoot: the view of the host's root (and /dev) stays writable.
	ReadOnlyRoot bool
	// Pdeathsig: no parent-death signal on the reaper, so that a test can show
	// that the reaper's pipe alone ends the sandbox when the gate dies.
	Pdeathsig bool
}

// Any reports whether some layer is switched off.
func (l Layers) Any() bool {
	return l.Seccomp || l.Landlock || l.NetNS || l.ReadOnlyRoot || l.Pdeathsig
}

// String lists the layers that are switched off, or "none".
func (l Layers) String() string {
	var s []string
	for _, x := range []struct {
		on   bool
		name string
	}{{l.Seccomp, "seccomp"}, {l.Landlock, "landlock"}, {l.NetNS, "netns"}, {l.ReadOnlyRoot, "readonly-root"}, {l.Pdeathsig, "pdeathsig"}} {
		if x.on {
			s = append(s, x.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ",")
}

// Config says what to run and what the agent may touch.
type Config struct {
	// Argv is the agent's command line; Argv[0] is looked up in the agent's PATH
	// inside the sandbox's view of the file system.
	Argv []string
	// Env is the agent's environment (nil: the gate's own).
	Env []string
	// Dir is the agent's working directory inside the view (empty: the gate's working
	// directory if it is visible, else "/").
	Dir string
	// Writable are host paths (directories or files) the agent may write; they are
	// bound read-write at the same path. "/" is refused.
	Writable []string
	// ReadOnly are host paths to show read-only even where the view hides the host
	// (under /tmp or /run, which are empty tmpfs mounts inside the sandbox). A
	// read-only path may not lie under a writable one (nor under /tmp with
	// WritableTmp): Landlock rules are inherited down the tree, and a FIFO or a device
	// there would be writable despite the read-only mount.
	ReadOnly []string
	// WritableTmp lets the agent write its private /tmp (a tmpfs that dies with the
	// sandbox); without it /tmp is empty and read-only to the agent.
	WritableTmp bool
	// ProxyPort is the TCP port of the proxy listener inside the network namespace
	// (0: DefaultProxyPort). With Disable.NetNS the listener is on the host's
	// 127.0.0.1 and ProxyPort 0 picks a free port.
	ProxyPort int
	// Stdin, Stdout and Stderr of the agent (nil: /dev/null).
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Disable switches layers off for negative controls (tests only).
	Disable Layers
}

// Error is a typed failure of the sandbox; compare with errors.Is against the
// variables below.
type Error struct {
	kind   string
	detail string
	err    error
}

func (e *Error) Error() string {
	s := "soundgate/sandbox: " + e.kind
	if e.detail != "" {
		s += ": " + e.detail
	}
	return s
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

// Is matches errors of the same kind.
func (e *Error) Is(target error) bool {
	var t *Error
	return errors.As(target, &t) && t.kind == e.kind && t.detail == "" && t.err == nil
}

func wrap(kind *Error, err error, format string, a ...any) *Error {
	return &Error{kind: kind.kind, detail: fmt.Sprintf(format, a...), err: err}
}

// The sandbox's errors.
var (
	// ErrConfig: the configuration is invalid; nothing was started.
	ErrConfig = &Error{kind: "invalid configuration"}
	// ErrKernel: the kernel lacks a feature the sandbox needs (a Landlock ABI,
	// seccomp, user namespaces); nothing was started.
	ErrKernel = &Error{kind: "kernel lacks a required feature"}
	// ErrSetup: building the sandbox failed; whatever was started has been killed.
	ErrSetup = &Error{kind: "sandbox setup failed"}
)

// normalize checks c and returns it with absolute, resolved paths and defaults set.
func (c Config) normalize() (Config, error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return c, wrap(ErrConfig, nil, "no command to run")
	}
	if len(c.Argv) > ArgvMax {
		return c, wrap(ErrConfig, nil, "%d arguments, limit %d", len(c.Argv), ArgvMax)
	}
	if len(c.Writable)+len(c.ReadOnly) > PathsMax {
		return c, wrap(ErrConfig, nil, "%d paths, limit %d", len(c.Writable)+len(c.ReadOnly), PathsMax)
	}
	if c.ProxyPort < 0 || c.ProxyPort > 65535 {
		return c, wrap(ErrConfig, nil, "proxy port %d out of range", c.ProxyPort)
	}
	if c.ProxyPort == 0 && !c.Disable.NetNS {
		c.ProxyPort = DefaultProxyPort
	}
	var err error
	if c.Writable, err = resolvePaths(c.Writable, "writable"); err != nil {
		return c, err
	}
	if c.ReadOnly, err = resolvePaths(c.ReadOnly, "read-only"); err != nil {
		return c, err
	}
	writable := c.Writable
	if c.WritableTmp {
		writable = append([]string{"/tmp"}, writable...)
	}
	for _, r := range c.ReadOnly {
		for _, w := range writable {
			if r == w || strings.HasPrefix(r, w+"/") {
				return c, wrap(ErrConfig, nil, "read-only path %q lies under writable path %q", r, w)
			}
		}
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.Dir == "" {
		if wd, err := os.Getwd(); err == nil {
			c.Dir = wd
		} else {
			c.Dir = "/"
		}
	} else if !filepath.IsAbs(c.Dir) {
		return c, wrap(ErrConfig, nil, "working directory %q is not absolute", c.Dir)
	}
	return c, nil
}

func resolvePaths(paths []string, what string) ([]string, error) {
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			return nil, wrap(ErrConfig, nil, "%s path %q is not absolute", what, p)
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, wrap(ErrConfig, err, "%s path %q: %v", what, p, err)
		}
		if r == "/" {
			return nil, wrap(ErrConfig, nil, "%s path %q is the root", what, p)
		}
		out = append(out, filepath.Clean(r))
	}
	return out, nil
}
