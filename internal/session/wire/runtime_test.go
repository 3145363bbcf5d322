//go:build unix

package wire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUserRuntimeFolder: the runtime folder of a user that is not root is
// accepted only as pam_systemd makes it; each refusal says what is wrong
// and, for a missing one, how to make it.
func TestUserRuntimeFolder(t *testing.T) {
	dir := t.TempDir()
	uid := os.Geteuid()
	mk := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.Mkdir(p, mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		return p
	}
	good := mk("good", 0o700)
	open := mk("open", 0o755)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(good, link)
	for _, c := range []struct {
		name, dir string
		uid       int
		want      string
	}{
		{"private and the user's", good, uid, ""},
		{"missing", filepath.Join(dir, "none"), uid, "does not exist (a login through pam_systemd makes it; in a container or CI job, root can: install -d -m 0700"},
		{"a file", file, uid, "is not a folder"},
		{"a symlink to a good one", link, uid, "is not a folder"},
		{"someone else's", good, uid + 1, "belongs to uid"},
		{"open to others", open, uid, "others may enter it (chmod 0700"},
	} {
		err := userRuntimeFolder(c.dir, c.uid)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
