package sandbox

import (
	"errors"
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
)

// maxSymlinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinkHops = 40

// maxRaceRetries bounds how often a component that is not what the first
// look at it saw (a symlink then, a file now) is looked at again.
const maxRaceRetries = 100

// Canonical returns the canonical absolute form of path, taken relative
// to base (absolute, canonical) when it is not absolute: the resolver's
// walk (walkPath) by handle, symlinks resolved component by component
// where the path exists and the rest appended as written (a missing name
// is no symlink). The path is never cleaned before its symlinks resolve:
// "link/.." is the parent of the link's target. Errors carry a code:
// FS_INVALID_ARGUMENT for an empty path or a NUL byte, FS_IO for a
// symlink loop, FS_NOT_DIR for a file used as a folder. It is spelled as
// the OS spells paths (fsys.ToOS), canonicalPath's as the fence does.
func Canonical(base, path string) (string, error) {
	c, err := canonicalPath(base, path)
	return fsys.ToOS(c), err
}

// LinksOn returns the symlinks Canonical(base, path) follows, each by the
// canonical path of the link itself, in the order it meets them: what
// path leads to rests on them as much as on its folders. A walk that
// fails (a loop, a file used as a folder) gives the links met before.
func LinksOn(base, path string) []string {
	p, err := fromOS(path)
	if err == nil && !isAbs(p) {
		var b string
		if b, err = fromOS(base); err == nil {
			p = b + "/" + p
		}
	}
	if err != nil {
		return nil
	}
	var links []string
	w, err := walkPath(p, walkSpec{flags: oPath, followLast: true, keepMissing: true,
		link: func(l string) { links = append(links, fsys.ToOS(l)) }})
	if err == nil {
		fsys.Close(w.fd)
	}
	return links
}

// canonicalPath is Canonical in the fence's spelling of paths (on
// Windows "/C:/x").
func canonicalPath(base, path string) (string, error) {
	if path == "" {
		return "", fserr.New(fserr.InvalidArgument, "empty path")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", fserr.New(fserr.InvalidArgument, "path contains a NUL byte")
	}
	path, err := fromOS(path)
	if err != nil {
		return "", err
	}
	if base, err = fromOS(base); err != nil {
		return "", err
	}
	if !isAbs(path) {
		path = base + "/" + path
	}
	w, err := walkPath(path, walkSpec{flags: oPath, followLast: true, keepMissing: true})
	switch {
	case err == nil:
		fsys.Close(w.fd)
		return w.canonical(), nil
	case errors.Is(err, syscall.ENOTDIR):
		return "", fserr.Wrap(fserr.NotDir, path+": "+walkedSoFar(err)+" is not a folder", err)
	case errors.Is(err, syscall.ELOOP):
		return "", fserr.Wrap(fserr.IO, path+": too many levels of symbolic links", err)
	case errors.As(err, new(emptySymlink)):
		return "", fserr.New(fserr.InvalidArgument, path+": "+walkedSoFar(err)+" is an empty symlink")
	case windowsName && errors.Is(err, syscall.EINVAL):
		return "", fserr.Wrap(fserr.InvalidArgument, path+": "+walkedSoFar(err)+" is not one plain file name on Windows "+
			"(a stream, a device name, a trailing dot or space)", err)
	}
	return "", fserr.FromOS("resolve", path, err)
}

// walkedSoFar is the path a walk's error names: as far as it got.
func walkedSoFar(err error) string {
	var perr *os.PathError
	if errors.As(err, &perr) {
		return perr.Path
	}
	return "?"
}

// splitPath splits p into its non-empty components.
func splitPath(p string) []string {
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// prefixResolver resolves the literal leading folders of one policy's
// deny_read globs, sharing the work between globs: the usual list's
// "~/.ssh/**", "~/.aws/**" and "~/.gnupg/**" resolve the home folder once
// and then look at one name each, rather than each walking the whole
// prefix (15 system calls a call down to 6).
type prefixResolver struct {
	cwd string
	// folders are the canonical forms of the folders resolved so far, by
	// their spelling in a glob; a failed one maps to "".
	folders map[string]string
}

// canonicalGlob resolves the symlinks in the literal leading folders of an
// absolute glob, so that a secret reached through a symlinked spelling of
// them is matched too. A relative glob, or one whose prefix does not
// resolve, is returned as given.
func (r *prefixResolver) canonicalGlob(g string) string {
	if !strings.HasPrefix(g, "/") {
		return g
	}
	prefix, rest := pathmatch.LiteralPrefix(g)
	if prefix == "" {
		return g
	}
	canon, ok := r.canonical(prefix)
	if !ok {
		return g
	}
	return strings.Join(append([]string{canon}, rest...), "/")
}

// canonical is Canonical(cwd, p) for an absolute p. Its folder is
// resolved once for every prefix that shares it; then the last name, if
// it is missing or not a symlink, is the canonical folder joined with it
// (a name that is not a symlink resolves to itself), and otherwise the
// whole of p is resolved as Canonical resolves it.
func (r *prefixResolver) canonical(p string) (string, bool) {
	dir, name := path.Split(p)
	dir = strings.TrimRight(dir, "/")
	if dir == "" || name == "" || name == "." || name == ".." {
		return r.resolve(p)
	}
	cdir, seen := r.folders[dir]
	if !seen {
		cdir, _ = r.resolve(dir)
		if r.folders == nil {
			r.folders = map[string]string{}
		}
		r.folders[dir] = cdir
	}
	if cdir == "" {
		return r.resolve(p)
	}
	joined := strings.TrimSuffix(cdir, "/") + "/" + name
	var st fsys.Stat_t
	switch err := fsys.Fstatat(fsys.AT_FDCWD, joined, &st, fsys.AT_SYMLINK_NOFOLLOW); {
	case err == fsys.ENOENT:
		return joined, true
	case err == nil && st.Mode&fsys.S_IFMT != fsys.S_IFLNK:
		return joined, true
	}
	return r.resolve(p)
}

// resolve is Canonical(cwd, p), with ok false where it fails.
func (r *prefixResolver) resolve(p string) (string, bool) {
	c, err := canonicalPath(r.cwd, p)
	if err != nil {
		return "", false
	}
	return c, true
}
