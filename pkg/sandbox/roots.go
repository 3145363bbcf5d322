package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// Root is one canonical writable root and where it came from.
type Root struct {
	// Path is the canonical absolute path: symlinks resolved.
	Path string `json:"path"`
	// Origin is "cwd", "tmp" or "writable_roots".
	Origin string `json:"origin"`
}

// WritableRoots derives the writable set of p: the session cwd, the temp
// areas (/tmp and os.TempDir(), unless p.Tmp is false) and p.WritableRoots,
// each canonicalized once and listed once. It is the single place that
// knows this set; the fence, `dsh-fs policy` and the kernel layer all ask
// it, so they never drift apart. A relative configured root is taken
// relative to the session cwd. A root that does not exist yet stays in
// the set under its canonical spelling.
func WritableRoots(p Policy) ([]Root, error) {
	type candidate struct{ path, origin string }
	cands := []candidate{{p.Cwd, "cwd"}}
	if p.Tmp {
		cands = append(cands, candidate{"/tmp", "tmp"}, candidate{os.TempDir(), "tmp"})
	}
	for _, r := range p.WritableRoots {
		cands = append(cands, candidate{r, "writable_roots"})
	}
	var roots []Root
	seen := map[string]bool{}
	for _, c := range cands {
		canon, err := Canonical(p.Cwd, c.path)
		if err != nil {
			return nil, err
		}
		if seen[canon] {
			continue
		}
		seen[canon] = true
		roots = append(roots, Root{Path: canon, Origin: c.origin})
	}
	return roots, nil
}

// RootPaths returns the paths of roots, in order.
func RootPaths(roots []Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// within returns target's path relative to root when the canonical target
// lies inside the canonical root, comparing whole components: "/ws_evil" is
// not inside "/ws". The relative path of the root itself is ".".
func within(root, target string) (string, bool) {
	if target == root {
		return ".", true
	}
	if root == "/" {
		return target[1:], true
	}
	if strings.HasPrefix(target, root) && target[len(root)] == filepath.Separator {
		return target[len(root)+1:], true
	}
	return "", false
}

// sameFileAncestor looks for an ancestor of target (target included) that
// is the same file as root by device and inode, so that an alias spelling
// of a root (a bind mount, a case-insensitive name) is recognized without
// ever treating an unrelated prefix as containment. It returns target's
// path relative to that ancestor.
func sameFileAncestor(rootInfo os.FileInfo, target string) (string, bool) {
	rel := ""
	for dir := target; ; dir = filepath.Dir(dir) {
		if fi, err := os.Stat(dir); err == nil && os.SameFile(fi, rootInfo) {
			if rel == "" {
				rel = "."
			}
			return rel, true
		}
		if dir == "/" {
			return "", false
		}
		if rel == "" {
			rel = filepath.Base(dir)
		} else {
			rel = filepath.Base(dir) + string(filepath.Separator) + rel
		}
	}
}
