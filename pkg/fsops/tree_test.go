package fsops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// searchTree is the tree the search tests share, in os.Root's notation:
// "d/" a folder, "f=content" a file, "a => x" a symlink. Under the
// session file it returns (deny_read: "**/.env" and "**/secret"), .env,
// secret/ and everything beneath it are hidden; build/ is what
// .gitignore excludes; leak is a symlink to a hidden file, and bin.dat
// a binary file, both with the word every search looks for.
func searchTree(t *testing.T) (dir, session string) {
	t.Helper()
	dir = t.TempDir()
	makeTree(t, dir,
		".gitignore=build/\n",
		".env=TODO=the secret\n",
		"src/a.go=package a\n\nfunc Hello() {}\n\n// TODO: one\n",
		"src/b_test.go=package a\n// todo: two, in lower case\n",
		"src/long.txt=TODO "+strings.Repeat("x", 100)+"\n",
		"secret/key.txt=TODO the key\n",
		"build/out.txt=TODO built\n",
		"bin.dat=TODO\x00\x01",
		"empty/",
		"leak => secret/key.txt",
	)
	session = filepath.Join(t.TempDir(), "session.yaml")
	if err := os.WriteFile(session, []byte("deny_read: [\"**/.env\", \"**/secret\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, session
}

// makeTree makes entries beneath dir, in the notation of searchTree.
func makeTree(t *testing.T, dir string, entries ...string) {
	t.Helper()
	for _, e := range entries {
		var err error
		switch name, target, link := strings.Cut(e, " => "); {
		case link:
			p := filepath.Join(dir, name)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(target, p)
			}
		case strings.HasSuffix(e, "/"):
			err = os.MkdirAll(filepath.Join(dir, e), 0o755)
		default:
			name, content, _ := strings.Cut(e, "=")
			p := filepath.Join(dir, name)
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, []byte(content), 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
