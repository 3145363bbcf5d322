package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dshfs/dsh-fs/pkg/fserr"
)

// maxSymlinkHops bounds symlink resolution, as the kernel's ELOOP does.
const maxSymlinkHops = 40

// maxRaceRetries bounds how often a component that stopped being a symlink
// between Lstat and Readlink is looked at again.
const maxRaceRetries = 100

// Canonical returns the canonical absolute form of path, taken relative to
// base (an absolute, canonical folder) when it is not absolute.
//
// Symlinks are resolved component by component on the part of the path that
// exists; the part that does not exist yet is appended as written, since a
// name that does not exist cannot be a symlink. The path is never cleaned
// lexically before its symlinks are resolved: "link/.." is the parent of the
// link's target, not the folder holding the link. A trailing slash, "." and
// repeated slashes are dropped.
//
// Errors carry a code: FS_INVALID_ARGUMENT for an empty path or a NUL byte,
// FS_IO for a symlink loop, FS_NOT_DIR when a file is used as a folder, and the OS's
// classification for anything else Lstat or Readlink reports.
func Canonical(base, path string) (string, error) {
	if path == "" {
		return "", fserr.New(fserr.InvalidArgument, "empty path")
	}
	if strings.IndexByte(path, 0) >= 0 {
		return "", fserr.New(fserr.InvalidArgument, "path contains a NUL byte")
	}
	if !filepath.IsAbs(path) {
		path = base + string(filepath.Separator) + path
	}
	pending := splitPath(path)
	resolved := "/"
	missing := 0 // how many trailing components of resolved do not exist
	hops, retries := 0, 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch {
		case name == ".":
			continue
		case name == "..":
			// resolved has no symlinks in it, so its lexical parent is
			// its real parent.
			resolved = filepath.Dir(resolved)
			if missing > 0 {
				missing--
			}
			continue
		case missing > 0:
			resolved = filepath.Join(resolved, name)
			missing++
			continue
		}
		next := filepath.Join(resolved, name)
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			resolved, missing = next, 1
			continue
		case errors.Is(err, syscall.ENOTDIR):
			return "", fserr.Wrap(fserr.NotDir, path+": "+resolved+" is not a folder", err)
		case err != nil:
			return "", fserr.FromOS("resolve", path, err)
		case fi.Mode()&fs.ModeSymlink == 0:
			if !fi.IsDir() && len(pending) > 0 {
				// "file/x", "file/." and "file/.." all fail in the kernel too.
				return "", fserr.Wrap(fserr.NotDir, path+": "+next+" is not a folder", syscall.ENOTDIR)
			}
			resolved = next
			continue
		}
		target, err := os.Readlink(next)
		if errors.Is(err, syscall.EINVAL) && retries < maxRaceRetries {
			// Replaced by a non-link since the Lstat: look again.
			retries++
			pending = append([]string{name}, pending...)
			continue
		}
		if err != nil {
			return "", fserr.FromOS("resolve", path, err)
		}
		hops++
		if hops > maxSymlinkHops {
			return "", fserr.Wrap(fserr.IO, path+": too many levels of symbolic links", syscall.ELOOP)
		}
		if target == "" {
			return "", fserr.New(fserr.InvalidArgument, path+": "+next+" is an empty symlink")
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

// splitPath splits p into its non-empty components.
func splitPath(p string) []string {
	parts := strings.Split(p, string(filepath.Separator))
	out := parts[:0]
	for _, s := range parts {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
