package mutation

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A run works on a copy of the module made when it starts, never on the tree itself:
// the tree may be edited while a long run goes on (a developer saving the test that
// kills a survivor), and every build reads the source again, so only a copy keeps one
// version of the code under test from the first mutant to the last.

// testHookCopied, when set (by tests), runs once the copy is made.
var testHookCopied func()

// moduleRoot returns the directory of the go.mod that governs dir.
func moduleRoot(dir string) (string, error) {
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("%w: no go.mod in %s or above", ErrLoad, dir)
		}
	}
}

// workCopy copies the module that holds dir to dst and returns dir's place in the
// copy.
func workCopy(ctx context.Context, dir, dst string) (string, error) {
	root, err := moduleRoot(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrConfig, err)
	}
	if err := copyModule(ctx, root, dst); err != nil {
		return "", err
	}
	if testHookCopied != nil {
		testHookCopied()
	}
	return filepath.Join(dst, rel), nil
}

// copyModule copies the module at root to dst: in a git work tree the files git
// would keep (tracked, and untracked ones that are not ignored, so that build output
// and node_modules stay behind), elsewhere every file but .git and node_modules.
func copyModule(ctx context.Context, root, dst string) error {
	files, err := moduleFiles(ctx, root)
	if err != nil {
		return err
	}
	for i, rel := range files {
		if i%64 == 0 && ctx.Err() != nil {
			return fmt.Errorf("%w while copying the module", ErrInterrupted)
		}
		src := filepath.Join(root, rel)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) {
			continue // tracked but deleted in the work tree
		}
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(src)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, to); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			b, err := os.ReadFile(src)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
				return err
			}
		}
	}
	return nil
}

// moduleFiles lists the files of the module at root, relative to it.
func moduleFiles(ctx context.Context, root string) ([]string, error) {
	cmd := exec.CommandContext(ctx, "git", "-C", root, "ls-files", "-z", "-c", "-o", "--exclude-standard")
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range bytes.Split(out, []byte{0}) {
			if len(f) > 0 {
				files = append(files, filepath.FromSlash(string(f)))
			}
		}
		return files, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w while listing the module", ErrInterrupted)
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, err := filepath.Rel(root, p)
			if err != nil || strings.HasPrefix(rel, "..") {
				return fmt.Errorf("%s is outside %s", p, root)
			}
			files = append(files, rel)
		}
		return nil
	})
	return files, err
}
