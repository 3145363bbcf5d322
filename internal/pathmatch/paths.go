package pathmatch

import (
	"io/fs"
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// BeneathAny reports whether the canonical target lies at or beneath one
// of the canonical folders roots.
func BeneathAny(roots []string, target string) bool {
	for _, r := range roots {
		if _, ok := Within(r, target); ok {
			return true
		}
	}
	return false
}

// Within returns target's path relative to root when the canonical target
// lies inside the canonical root, comparing whole components: "/ws_evil" is
// not inside "/ws". The relative path of the root itself is ".".
func Within(root, target string) (string, bool) {
	if target == root {
		return ".", true
	}
	if root == "/" {
		return target[1:], true
	}
	if strings.HasPrefix(target, root) && target[len(root)] == '/' {
		return target[len(root)+1:], true
	}
	return "", false
}

// LiteralPrefix splits a glob at its first component with a wildcard:
// the literal folders before it, joined ("" for none), and the
// components from it on.
func LiteralPrefix(g string) (prefix string, rest []string) {
	parts := strings.Split(g, "/")
	n := 0
	for n < len(parts) && !strings.ContainsAny(parts[n], "*?[\\") {
		n++
	}
	return strings.Join(parts[:n], "/"), parts[n:]
}

// ReadDirBounded reads the entries of dir, at most limit of them; ok is
// false when dir holds more. A folder that cannot be opened (gone since,
// no permission, swapped for a symlink) reads as empty: it holds nothing
// the walk can name.
func ReadDirBounded(dir string, limit int) (entries []fs.DirEntry, ok bool) {
	fd, err := fsys.Open(dir, fsys.O_RDONLY|fsys.O_DIRECTORY|fsys.O_NOFOLLOW|fsys.O_CLOEXEC, 0)
	if err != nil {
		return nil, true
	}
	f := os.NewFile(uintptr(fd), dir)
	defer f.Close()
	for {
		batch, err := f.ReadDir(256)
		entries = append(entries, batch...)
		if len(entries) > limit {
			return entries[:limit], false
		}
		if err != nil {
			// io.EOF, or a read error: what was read is all there is.
			return entries, true
		}
	}
}
