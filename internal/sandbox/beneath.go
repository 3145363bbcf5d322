package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// A move renames everything beneath what it moves: a folder that holds
// the trusted config, a deny_read secret or a protected file takes it out
// of its entry, and a folder moved into place puts one there. So a folder
// move is refused, on the side it leaves and the side it lands on, when
// something beneath it is denied by an entry on one side and not by that
// same entry on the other (docs/design.md §5, move). An entry that still
// denies the same file after the move ("**/.env") lets it go:
// the move changes nothing that entry decides. A folder moved into or
// out of a git directory is refused whatever it holds: the git rule
// (GitProtectedPart) is no glob, and such a folder may carry a
// worktree's or submodule's config and hooks (pathmatch.InsideGitDir).
//
// Entries anchored to a path (trusted config paths, absolute globs,
// globs relative to a writable root without a leading "**") are decided
// by prefix: their literal part lying at or beneath the folder refuses
// it, whether anything exists there or not. A relative glob of more than
// one part ("secrets/*.key" anywhere) is looked for by a walk of the
// folder through its handle, bounded by maxBeneathEntries; a folder with
// more to look through is refused.

// maxBeneathEntries bounds the walk of a moved folder: past it the move
// is refused, not decided on part of what it carries.
const maxBeneathEntries = 10000

// beneathGuard is one deny_read or protected entry as the folder checks
// see it.
type beneathGuard struct {
	// base is "" for a glob on the canonical path, or the writable root
	// a protected glob is relative to.
	base string
	// parts is the glob split at "/", a trailing "**" dropped: an entry
	// covers everything beneath what it names anyway.
	parts []string
	// shown is the entry to name in a denial; deny says it is deny_read.
	shown string
	deny  bool
}

// name is p as g matches it: the canonical path itself, or p relative to
// g's root; false when p is outside that root.
func (g beneathGuard) name(p string) ([]string, bool) {
	if g.base == "" {
		return pathmatch.FoldedParts(pathmatch.Components(p)), true
	}
	rel, ok := pathmatch.Within(g.base, p)
	if !ok {
		return nil, false
	}
	return pathmatch.FoldedParts(pathmatch.Components(rel)), true
}

// covers reports whether g denies p, or a folder above it.
func (g beneathGuard) covers(p string) bool {
	name, ok := g.name(p)
	return ok && pathmatch.CoverParts(g.parts, name)
}

// mayCoverBeneath reports whether g could deny something strictly
// beneath the folder dir.
func (g beneathGuard) mayCoverBeneath(dir string) bool {
	name, ok := g.name(dir)
	return ok && pathmatch.MayCover(g.parts, name)
}

// anchoredAt reports whether g names a literal path at or beneath dir:
// the folder carries it, whatever exists there.
func (g beneathGuard) anchoredAt(dir string) bool {
	if g.base != "" {
		if _, ok := pathmatch.Within(g.base, dir); !ok {
			// A writable root beneath the folder moves with all its
			// protected entries.
			_, inside := pathmatch.Within(dir, g.base)
			return inside
		}
	}
	name, ok := g.name(dir)
	if !ok {
		return false
	}
	n := 0
	for n < len(g.parts) && !strings.ContainsAny(g.parts[n], "*?[\\") {
		n++
	}
	if n == 0 || n < len(name) {
		return false
	}
	for i := range name {
		if name[i] != g.parts[i] {
			return false
		}
	}
	return true
}

// anywhere reports whether g is "**/" and one name: it denies the same
// files wherever the folder above them is moved.
func (g beneathGuard) anywhere() bool {
	return len(g.parts) == 2 && g.parts[0] == "**" && !strings.Contains(g.parts[1], "**")
}

// beneathGuards are the entries a folder move of this fence answers to:
// deny_read in every mode, the protected ones where the mode enforces
// them (workspace-write; read-only refuses every move by name, and
// danger-full-access protects nothing).
func (f *Fence) beneathGuards() []beneathGuard {
	split := func(g string) []string {
		parts := pathmatch.Components(g)
		for len(parts) > 1 && parts[len(parts)-1] == "**" {
			parts = parts[:len(parts)-1]
		}
		return parts
	}
	var out []beneathGuard
	for _, g := range f.denyRead {
		out = append(out, beneathGuard{parts: pathmatch.FoldedParts(split(g.match)), shown: g.shown, deny: true})
	}
	if f.mode != policy.WorkspaceWrite {
		return out
	}
	roots, _ := f.Roots()
	for _, g := range f.policy.Protected {
		pattern := f.policy.ExpandHome(g)
		if strings.HasPrefix(pattern, "/") {
			out = append(out, beneathGuard{parts: pathmatch.FoldedParts(split(pattern)), shown: g})
			continue
		}
		for _, r := range roots {
			out = append(out, beneathGuard{base: r.Path, parts: pathmatch.FoldedParts(split(pattern)), shown: g})
		}
	}
	for _, p := range f.absProtected {
		out = append(out, beneathGuard{parts: pathmatch.FoldedParts(pathmatch.Components(literalGlob(p))), shown: p})
	}
	return out
}

// literalGlob escapes the glob characters of a path, so it matches only
// itself.
func literalGlob(p string) string {
	var b strings.Builder
	for _, c := range p {
		if strings.ContainsRune("*?[\\", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// rename moves src, the name fromName in the folder from, to dst, the
// name toName in the folder to, with RENAME_NOREPLACE: what is at the
// destination is never replaced (FS_EXISTS), and a symlink is moved as a
// link. A folder is moved only when what lies beneath it is denied alike
// before and after (see beneathGuard); what was decided on is the object
// opened before the decision, and one found exchanged for it by the time
// of the rename is moved back and FS_STALE. Both folders come from
// openDir for src and dst (Move). It returns the type bits (S_IFMT) of
// what it moved.
func (f *Fence) rename(op string, src, dst Target, from *Dir, fromName string, to *Dir, toName string) (uint32, error) {
	obj, err := openRead(from.fd, fromName, oPath)
	if err != nil {
		return 0, src.osError(op, &os.PathError{Op: "open", Path: joinPath(from.Path, fromName), Err: err})
	}
	defer fsys.Close(obj)
	var before fsys.Stat_t
	if err := fsys.Fstat(obj, &before); err != nil {
		return 0, src.osError(op, os.NewSyscallError("fstat", err))
	}
	if before.Mode&fsys.S_IFMT == fsys.S_IFDIR {
		if err := f.checkBeneath(op, src, dst, obj); err != nil {
			return 0, err
		}
	}
	if f.beforeRename != nil {
		f.beforeRename()
	}
	if err := from.rename(fromName, to, toName); err != nil {
		return 0, src.osError(op, err)
	}
	var after fsys.Stat_t
	if err := fsys.Fstatat(to.fd, toName, &after, fsys.AT_SYMLINK_NOFOLLOW); err == nil && after.Dev == before.Dev && after.Ino == before.Ino {
		return uint32(before.Mode & fsys.S_IFMT), nil
	}
	// Something else took the name between the decision and the
	// rename: put it back, and say the path changed.
	cause := fmt.Errorf("%s was exchanged for another file before the rename", src.Given)
	if err := to.rename(toName, from, fromName); err != nil {
		cause = fmt.Errorf("%w, and moving that file back to %s failed: %v", cause, src.Given, err)
	}
	return 0, stale(op, src, cause)
}

// checkBeneath decides the move of the folder opened as dir (an O_PATH
// descriptor) from src to dst.
func (f *Fence) checkBeneath(op string, src, dst Target, dir int) error {
	deny := func(g beneathGuard, t Target, matched string) error {
		if g.deny {
			return f.readDenied(op, t, matched)
		}
		return f.protectedDenied(op, t, matched)
	}
	for _, t := range []Target{src, dst} {
		if g, in := pathmatch.InsideGitDir(t.rel, t.Path, f.gitPointed); in && f.mode == policy.WorkspaceWrite {
			return f.protectedDenied(op, t, g)
		}
	}
	var walk []beneathGuard
	for _, g := range f.beneathGuards() {
		switch {
		case g.anchoredAt(src.Path):
			return deny(g, src, g.shown)
		case g.anchoredAt(dst.Path):
			return deny(g, dst, g.shown)
		case g.anywhere():
		case g.mayCoverBeneath(src.Path) || g.mayCoverBeneath(dst.Path):
			walk = append(walk, g)
		}
	}
	if len(walk) == 0 {
		return nil
	}
	w := beneathWalk{src: src.Path, dst: dst.Path, guards: walk}
	err := w.folder(dir, "")
	var hit *beneathHit
	switch {
	case errors.As(err, &hit):
		t := src
		if hit.dst {
			t = dst
		}
		return deny(hit.guard, t, hit.guard.shown+" at "+hit.rel)
	case errors.Is(err, errBeneathBound):
		return deny(walk[0], src, fmt.Sprintf("%s: more than %d entries beneath to look through", walk[0].shown, maxBeneathEntries))
	case err != nil:
		return fserr.Wrap(fserr.IO, fmt.Sprintf("%s: %s: looking through the folder for what lies beneath: %v", op, src.Given, err), err)
	}
	return nil
}

var errBeneathBound = errors.New("walk bound reached")

// beneathHit is an entry beneath the moved folder denied on one side of
// the move and not on the other.
type beneathHit struct {
	guard beneathGuard
	rel   string
	dst   bool // denied where it lands, not where it was
}

func (h *beneathHit) Error() string { return h.rel + ": " + h.guard.shown }

// beneathWalk looks through a moved folder, by handle and following no
// symlink, for entries the guards deny on one side only.
type beneathWalk struct {
	src, dst string
	guards   []beneathGuard
	seen     int
}

// folder walks the folder fd, at rel beneath the moved one.
func (w *beneathWalk) folder(fd int, rel string) error {
	dfd, err := fsys.Openat(fd, ".", fsys.O_RDONLY|fsys.O_DIRECTORY|fsys.O_CLOEXEC, 0)
	if err != nil {
		return os.NewSyscallError("openat", err)
	}
	d := os.NewFile(uintptr(dfd), rel)
	defer d.Close()
	for {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			if w.seen++; w.seen > maxBeneathEntries {
				return errBeneathBound
			}
			erel := joinPath(rel, e.Name())
			from, to := joinPath(w.src, erel), joinPath(w.dst, erel)
			descend := false
			for _, g := range w.guards {
				if was, is := g.covers(from), g.covers(to); was != is {
					return &beneathHit{guard: g, rel: erel, dst: is}
				}
				descend = descend || g.mayCoverBeneath(from) || g.mayCoverBeneath(to)
			}
			if !descend || !e.IsDir() {
				continue
			}
			sub, err := openRead(dfd, e.Name(), oPath|fsys.O_DIRECTORY)
			if err != nil {
				return &os.PathError{Op: "open", Path: erel, Err: err}
			}
			err = w.folder(sub, erel)
			fsys.Close(sub)
			if err != nil {
				return err
			}
		}
		if err == io.EOF || err == nil && len(entries) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
