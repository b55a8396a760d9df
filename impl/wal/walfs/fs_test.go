package walfs

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOSKeepsTheLogPrivate: what the real file system creates for a log (its
// directory, its files, its lock) only the gate's user may read: the records hold
// every effect's result.
func TestOSKeepsTheLogPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data", "log")
	if err := (OS{}).MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	f, err := OS{}.Create(Join(dir, "segment"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	lock, err := OS{}.Lock(Join(dir, "LOCK"))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	for _, c := range []struct {
		path string
		perm os.FileMode
	}{{filepath.Dir(dir), 0o700}, {dir, 0o700}, {Join(dir, "segment"), 0o600}, {Join(dir, "LOCK"), 0o600}} {
		st, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got&^c.perm != 0 {
			t.Errorf("%s: mode %04o, want at most %04o", c.path, got, c.perm)
		}
	}
}
