package tty

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// IsolateTerminals mounts a new devpts instance over /dev/pts, and its
// ptmx over /dev/ptmx, in the calling process's mount namespace, which
// must be the session's own: the session then sees, and can open by name,
// only the terminals it makes itself. The person's terminals (their
// /dev/pts/N, which a process of the person's uid, or root, could open to
// write an imitation of the supervisor's question or read what is typed)
// are not there. The session's own terminal is made in the new instance
// afterwards (OpenTerminal), so it has a name there.
func IsolateTerminals() error {
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount a devpts of the session's own on /dev/pts: %w", err)
	}
	var st unix.Stat_t
	if err := unix.Lstat("/dev/ptmx", &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
		// Missing, or a link to pts/ptmx already: it leads to the
		// new instance.
		return nil
	}
	if err := unix.Mount("/dev/pts/ptmx", "/dev/ptmx", "", unix.MS_BIND, ""); err != nil {
		return fmt.Errorf("bind /dev/pts/ptmx over /dev/ptmx: %w", err)
	}
	return nil
}
