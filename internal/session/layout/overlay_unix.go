//go:build unix

package layout

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// The overlays' folders lie in the session's private folder (the
// record's, 0700, outside every root), and what a session wrote through
// an overlay lands in them. exec runs as root, and they are made and
// removed through descriptors, never by a path that a symlink planted
// there could lead elsewhere.

// MakeOverlays makes, in the new folder dir (mode 0700), the upper and
// work folders of an overlay for each of caches; inTmpfs makes dir
// alone, empty, for the applier's tmpfs (plan.Files.OverlayMemory), and
// returns the same folders, to be made in it.
func MakeOverlays(dir string, caches []plan.Cache, inTmpfs bool) ([]plan.Overlay, error) {
	parent, err := kernel.OpenNoSymlinks(filepath.Dir(dir), folderOnly)
	if err != nil {
		return nil, err
	}
	defer unix.Close(parent)
	if err := unix.Mkdirat(parent, filepath.Base(dir), 0o700); err != nil {
		return nil, &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	dfd, err := openFolderAt(parent, filepath.Base(dir))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	defer unix.Close(dfd)
	var out []plan.Overlay
	for i := range caches {
		n := fmt.Sprint(i)
		o := plan.Overlay{Path: caches[i].Path, Upper: filepath.Join(dir, n, "upper"), Work: filepath.Join(dir, n, "work")}
		if inTmpfs {
			out = append(out, o)
			continue
		}
		if err := unix.Mkdirat(dfd, n, 0o700); err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(dir, n), Err: err}
		}
		nfd, err := openFolderAt(dfd, n)
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: filepath.Join(dir, n), Err: err}
		}
		err = errors.Join(unix.Mkdirat(nfd, "upper", 0o700), unix.Mkdirat(nfd, "work", 0o700))
		unix.Close(nfd)
		if err != nil {
			return nil, &os.PathError{Op: "mkdir", Path: filepath.Join(dir, n), Err: err}
		}
		out = append(out, o)
	}
	return out, nil
}

// ResetOverlay empties the upper and work folders of o, as MakeOverlays
// made them: a probe mounted o once, and a volatile overlay's work
// folder refuses another mount.
func ResetOverlay(o plan.Overlay) error {
	parent, err := kernel.OpenNoSymlinks(filepath.Dir(o.Upper), folderOnly)
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	for _, name := range []string{filepath.Base(o.Upper), filepath.Base(o.Work)} {
		if err := removeTreeAt(parent, name); err != nil {
			return &os.PathError{Op: "remove", Path: filepath.Join(filepath.Dir(o.Upper), name), Err: err}
		}
		if err := unix.Mkdirat(parent, name, 0o700); err != nil {
			return &os.PathError{Op: "mkdir", Path: filepath.Join(filepath.Dir(o.Upper), name), Err: err}
		}
	}
	return nil
}

// RemoveTree removes dir and everything in it, also where a folder in
// it has no write or search bit for its owner (a module cache's folders
// are read-only, an overlay's work folder has mode 0): such a folder is
// given them first, through its own descriptor. It never follows a
// symlink: each name is opened with O_NOFOLLOW beneath the descriptor of
// the folder that holds it. A dir that does not exist is no error.
func RemoveTree(dir string) error {
	dir = filepath.Clean(dir)
	parent, err := kernel.OpenNoSymlinks(filepath.Dir(dir), folderOnly)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(parent)
	if err := removeTreeAt(parent, filepath.Base(dir)); err != nil {
		return &os.PathError{Op: "remove", Path: dir, Err: err}
	}
	return nil
}

// removeTreeAt removes name in the folder parent and, if it is a
// folder, everything in it, depth first.
func removeTreeAt(parent int, name string) error {
	err := unix.Unlinkat(parent, name, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	fd, err := openFolderAt(parent, name)
	if err == unix.ENOTDIR {
		return unix.Unlinkat(parent, name, 0)
	}
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	for {
		names, err := f.Readdirnames(1024)
		for _, n := range names {
			if err := removeTreeAt(fd, n); err != nil {
				return err
			}
		}
		if err != nil {
			break
		}
	}
	return unix.Unlinkat(parent, name, unix.AT_REMOVEDIR)
}

// openFolderAt opens the folder name in parent to read, without
// following a symlink, and gives it its owner's read, write and search
// bits where it lacks them (a module cache's folders are 0555, an
// overlay's work folder 0), first without opening it (grantOwnerAt).
func openFolderAt(parent int, name string) (int, error) {
	const flags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(parent, name, flags, 0)
	if err == unix.EACCES {
		if perr := grantOwnerAt(parent, name); perr != nil {
			return -1, perr
		}
		fd, err = unix.Openat(parent, name, flags, 0)
	}
	if err != nil {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return -1, err
	}
	if st.Mode&0o700 != 0o700 {
		if err := unix.Fchmod(fd, 0o700); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}
