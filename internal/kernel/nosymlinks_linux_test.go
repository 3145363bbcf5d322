package kernel

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenNoSymlinks: a path with no symlink opens, as O_PATH or as a
// folder; a symlink anywhere on the way, the last component included, is
// ELOOP, with openat2 and with the component walk alike.
func TestOpenNoSymlinks(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"a/b", "out"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "a/b/f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"out", "a/link"}, {"f", "a/b/flink"}} {
		if err := os.Symlink(l[0], filepath.Join(dir, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	opens := map[string]func(string, int) (int, error){"openat2": OpenNoSymlinks, "walk": openComponents}
	for name, open := range opens {
		for _, c := range []struct {
			path  string
			flags int
			want  error
		}{
			{"a/b/f", unix.O_PATH, nil},
			{"a/b", unix.O_RDONLY | unix.O_DIRECTORY, nil},
			{"a/b/f", unix.O_PATH | unix.O_DIRECTORY, unix.ENOTDIR},
			{"a/link", unix.O_PATH, unix.ELOOP},
			{"a/link/x", unix.O_PATH, unix.ELOOP},
			{"a/b/flink", unix.O_PATH, unix.ELOOP},
			{"a/missing", unix.O_PATH, unix.ENOENT},
		} {
			fd, err := open(filepath.Join(dir, c.path), c.flags)
			if err == nil {
				unix.Close(fd)
			}
			if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("%s: %s: %v, want %v", name, c.path, err, c.want)
			}
		}
	}
}
