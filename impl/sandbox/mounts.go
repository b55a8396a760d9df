package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// socketDirs are hidden behind empty tmpfs mounts: the host's sockets live there.
// /tmp is the agent's private scratch space (tmpSizeBytes), writable by Landlock's
// rules only with Config.WritableTmp.
var socketDirs = []string{"/tmp", "/run", "/var/run"}

// devNodes are bound from the host into the agent's minimal /dev.
var devNodes = []string{"null", "zero", "full", "random", "urandom", "tty"}

// Paths of the mount view's assembly: the scratch tmpfs is mounted at scratchRoot and
// becomes the root; the host's tree is then at hostRoot and the view is built at
// viewRoot.
const (
	scratchRoot = "/tmp"
	hostRoot    = "/oldroot"
	viewRoot    = "/newroot"
)

// buildView replaces the root of the (new, private) mount namespace with the
// agent's view and makes it the root: the host's tree read-only, tmpfs over the
// socket directories, a minimal /dev, a fresh /proc, c.ReadOnly bound read-only and
// c.Writable bound read-write. It runs in the sandbox init, before any restriction.
func buildView(c *initConfig) error {
	if err := pivotToScratch(); err != nil {
		return err
	}
	if err := unix.Mount(hostRoot, viewRoot, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return viewStep("bind the host's root", err)
	}
	if !c.Disable.ReadOnlyRoot {
		if err := setattr(viewRoot, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID, true); err != nil {
			return viewStep("make the root read-only", err)
		}
	}
	if err := hideSocketDirs(viewRoot); err != nil {
		return err
	}
	if err := buildDev(viewRoot+"/dev", hostRoot+"/dev", c.Disable.ReadOnlyRoot); err != nil {
		return err
	}
	if err := unix.Mount("proc", viewRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return viewStep("mount a fresh /proc", err)
	}
	if err := bindConfigured(c); err != nil {
		return err
	}
	return enterView()
}

// viewStep says which step of the view's assembly failed (nil if err is nil).
func viewStep(what string, err error) error {
	if err != nil {
		return fmt.Errorf("soundgate/sandbox: %s: %w", what, err)
	}
	return nil
}

// pivotToScratch makes the mount tree private and a scratch tmpfs the root, with
// the host's tree at hostRoot and an empty viewRoot beside it.
func pivotToScratch() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return viewStep("make / private", err)
	}
	if err := unix.Mount("tmpfs", scratchRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700,size=65536"); err != nil {
		return viewStep("mount scratch tmpfs", err)
	}
	for _, d := range []string{scratchRoot + hostRoot, scratchRoot + viewRoot} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return viewStep("mkdir", err)
		}
	}
	if err := unix.PivotRoot(scratchRoot, scratchRoot+hostRoot); err != nil {
		return viewStep("pivot_root to scratch", err)
	}
	return viewStep("chdir", unix.Chdir("/"))
}

// hideSocketDirs mounts an empty tmpfs over each of socketDirs in the view (the
// agent's private /tmp among them).
func hideSocketDirs(view string) error {
	for _, d := range socketDirs {
		fi, err := os.Lstat(view + d)
		if err != nil || !fi.IsDir() {
			continue // absent, or a symbolic link into another hidden directory
		}
		opts := "mode=0755,size=65536"
		if d == "/tmp" {
			opts = fmt.Sprintf("mode=01777,size=%d", tmpSizeBytes)
		}
		if err := unix.Mount("tmpfs", view+d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return viewStep("tmpfs over "+d, err)
		}
	}
	return nil
}

// bindConfigured binds c.ReadOnly and c.Writable from the host's tree into the view,
// parents before children, so that a writable path inside a read-only one wins.
func bindConfigured(c *initConfig) error {
	type bind struct {
		path     string
		writable bool
	}
	var binds []bind
	for _, p := range c.ReadOnly {
		binds = append(binds, bind{p, false})
	}
	for _, p := range c.Writable {
		binds = append(binds, bind{p, true})
	}
	sort.SliceStable(binds, func(i, j int) bool { return len(binds[i].path) < len(binds[j].path) })
	for _, b := range binds {
		if err := bindPath(hostRoot+b.path, viewRoot+b.path, b.writable || c.Disable.ReadOnlyRoot); err != nil {
			return viewStep("bind "+b.path, err)
		}
	}
	return nil
}

// enterView makes the view the root and drops the scratch root with the host's tree
// under it.
func enterView() error {
	if err := unix.Chdir(viewRoot); err != nil {
		return viewStep("chdir to the view", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return viewStep("pivot_root to the view", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return viewStep("detach the host's root", err)
	}
	return viewStep("chdir /", unix.Chdir("/"))
}

// buildDev mounts a tmpfs at dev holding the devNodes bound from the host, the usual
// symbolic links and an empty shm directory; read-only unless writable.
func buildDev(dev, host string, writable bool) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=65536"); err != nil {
		return fmt.Errorf("soundgate/sandbox: tmpfs over /dev: %w", err)
	}
	for _, n := range devNodes {
		if _, err := os.Stat(host + "/" + n); err != nil {
			continue
		}
		f, err := os.OpenFile(dev+"/"+n, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("soundgate/sandbox: /dev/%s: %w", n, err)
		}
		f.Close()
		if err := unix.Mount(host+"/"+n, dev+"/"+n, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("soundgate/sandbox: bind /dev/%s: %w", n, err)
		}
	}
	for name, target := range map[string]string{
		"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1",
		"stderr": "/proc/self/fd/2", "core": "/proc/kcore",
	} {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return fmt.Errorf("soundgate/sandbox: /dev/%s: %w", name, err)
		}
	}
	if err := os.Mkdir(dev+"/shm", 0o1777); err != nil {
		return fmt.Errorf("soundgate/sandbox: /dev/shm: %w", err)
	}
	if writable {
		return nil
	}
	if err := setattr(dev, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID, true); err != nil {
		return fmt.Errorf("soundgate/sandbox: make /dev read-only: %w", err)
	}
	return nil
}

// bindPath binds src at dst (creating the mount point inside a tmpfs if needed),
// read-only unless writable. A writable bind keeps the flags of the host's mount.
func bindPath(src, dst string, writable bool) error {
	fi, err := os.Stat(src)
	if err != nil {
		return err
	}
	if _, err := os.Lstat(dst); os.IsNotExist(err) {
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if fi.IsDir() {
			err = os.Mkdir(dst, 0o755)
		} else {
			var f *os.File
			if f, err = os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				err = f.Close()
			}
		}
		if err != nil {
			return err
		}
	}
	if err := unix.Mount(src, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return err
	}
	if writable {
		return setattr(dst, unix.MOUNT_ATTR_NOSUID, true)
	}
	return setattr(dst, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID, true)
}

// setattr sets mount attributes on the mount at path (and below it if recursive).
func setattr(path string, set uint64, recursive bool) error {
	flags := uint(0)
	if recursive {
		flags = unix.AT_RECURSIVE
	}
	return unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: set})
}
