package child

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// hideRuntime covers exec's runtime folder base (the record's runtime base)
// with an empty tmpfs, read-only once ready, that holds only the folder
// of this session's record, record, bound read-only over a file of the
// same name: every other session's folder (its record, its caches'
// upper folders), and whatever else lies in base, is out of the
// session's sight, while the record still validates where it is read
// (session.Read: a private session-* folder of base, owned by this user).
// The session's denial log, the folder DenialsFolder beside the record
// where it exists, is bound read-only there too: the supervisor renames
// each new log into it, and the session reads it (`dsh-fs denials`).
// The tmpfs and its folder are made by this process, so they are owned
// by its user, in its user namespace where it has one.
func hideRuntime(base, record string) error {
	rel, err := filepath.Rel(base, record)
	if err != nil || filepath.Dir(filepath.Dir(rel)) != "." || filepath.Dir(rel) == "." {
		return fmt.Errorf("the record %s is not in a session folder of %s", record, base)
	}
	rfd, err := kernel.OpenNoSymlinks(record, unix.O_PATH)
	if err != nil {
		return fmt.Errorf("open the record: %w", err)
	}
	defer unix.Close(rfd)
	logRel := filepath.Join(filepath.Dir(rel), plan.DenialsFolder)
	lfd, err := kernel.OpenNoSymlinks(filepath.Join(base, logRel), unix.O_PATH|unix.O_DIRECTORY)
	if err == nil {
		defer unix.Close(lfd)
	}
	bfd, err := openTarget(base, unix.S_IFREG)
	if err != nil {
		return err
	}
	err = unix.Mount("tmpfs", procFd(bfd), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=16k,mode=0700")
	unix.Close(bfd)
	if err != nil {
		return fmt.Errorf("tmpfs: %w", err)
	}
	// The folder and the file are made in the tmpfs, by a descriptor of
	// its root opened now that it is mounted.
	tfd, err := kernel.OpenNoSymlinks(base, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	if err := unix.Mkdirat(tfd, filepath.Dir(rel), 0o700); err != nil {
		return fmt.Errorf("mkdir: %w", err)
	}
	fd, err := unix.Openat(tfd, rel, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o400)
	if err != nil {
		return fmt.Errorf("create: %w", err)
	}
	unix.Close(fd)
	if err := bindReadOnly(rfd, record, unix.S_IFDIR); err != nil {
		return fmt.Errorf("bind the record: %w", err)
	}
	if lfd >= 0 {
		if err := unix.Mkdirat(tfd, logRel, 0o700); err != nil {
			return fmt.Errorf("mkdir: %w", err)
		}
		if err := bindReadOnly(lfd, filepath.Join(base, logRel), unix.S_IFREG); err != nil {
			return fmt.Errorf("bind the denial log: %w", err)
		}
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", procFd(tfd), "", flags, ""); err != nil {
		return fmt.Errorf("remount read-only: %w", err)
	}
	return nil
}
