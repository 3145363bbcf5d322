//go:build unix

package layout

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MakePlaceholders makes on disk each of m's placeholders, owned by the
// calling user, and records its identity. One that exists by now (a
// concurrent session's on the same root) is shared when it is an empty
// folder or file of the same kind, and recorded too; anything else is
// left unrecorded (its bind still covers it). The paths are already in
// m.ReadOnly. The caller removes them after the session, but those a
// live session still names (wire.End).
func MakePlaceholders(m *MountPlan) error {
	var refused []string
	defer func() { m.dropPlaceholders(refused) }()
	for i := range m.Placeholders {
		h := &m.Placeholders[i]
		var err error
		if h.Dir {
			err = unix.Mkdirat(unix.AT_FDCWD, h.Path, 0o755)
		} else {
			var fd int
			if fd, err = unix.Open(h.Path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644); err == nil {
				unix.Close(fd)
			}
		}
		if err == unix.EEXIST {
			// Another session's placeholder, made since this plan: shared,
			// and recorded, so that its maker does not remove it while
			// this session binds it. It may hold a third session's
			// placeholder (a protected file in this folder), so it is
			// recorded whatever it holds; removal takes it only while it
			// is the same and empty (RemovePlaceholders).
			var st unix.Stat_t
			if unix.Lstat(h.Path, &st) == nil && ofKind(st, h.Dir) {
				h.Dev, h.Ino = uint64(st.Dev), uint64(st.Ino)
			}
			continue
		}
		if (err == unix.EACCES || err == unix.EPERM) && !ownParent(h.Path) {
			// The supervisor, the session's own user, may not make it,
			// and cannot give itself the right to: neither can the
			// session, which runs as that user with no capability.
			refused = append(refused, h.Path)
			continue
		}
		if err != nil {
			RemovePlaceholders(m.Placeholders[:i])
			refused = nil
			// The path: a bare errno from here ("no such file or
			// directory") named nothing a person could look at.
			return &os.PathError{Op: "make placeholder", Path: h.Path, Err: err}
		}
		var st unix.Stat_t
		if err := unix.Lstat(h.Path, &st); err == nil {
			h.Dev, h.Ino = uint64(st.Dev), uint64(st.Ino)
		}
	}
	return nil
}

// ofKind says st is a folder (dir) or a regular file (not dir).
func ofKind(st unix.Stat_t, dir bool) bool {
	if dir {
		return st.Mode&unix.S_IFMT == unix.S_IFDIR
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG
}

// RemovePlaceholders removes each placeholder that is still the one made
// (its identity) and still empty, the last made first.
func RemovePlaceholders(hs []Placeholder) {
	for i := len(hs) - 1; i >= 0; i-- {
		h := hs[i]
		var st unix.Stat_t
		if h.Ino == 0 || unix.Lstat(h.Path, &st) != nil || uint64(st.Dev) != h.Dev || uint64(st.Ino) != h.Ino {
			continue
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFDIR:
			unix.Rmdir(h.Path) // fails, and stays, when not empty
		case unix.S_IFREG:
			if st.Size == 0 {
				unix.Unlink(h.Path)
			}
		}
	}
}

// ownParent says this process owns the folder path lies in: its owner
// may give itself the right to make path there (chmod), so a refusal
// there is no protection.
func ownParent(path string) bool {
	var st unix.Stat_t
	return unix.Lstat(filepath.Dir(path), &st) != nil || int(st.Uid) == unix.Geteuid()
}
