package child

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// hideRuntime covers exec's runtime folder base with an empty tmpfs,
// read-only once ready, holding only this session's record folder, bound
// read-only over a file of the same name, and the denial log's folder
// beside it where it exists: no other session's record or caches are in
// sight, while the record still validates where it is read (wire.Read).
// The tmpfs is made by this process, so its user owns it, in its user
// namespace where it has one.
func (a applier) hideRuntime(base, record string) error {
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
	if err := a.bindReadOnly(rfd, record, unix.S_IFDIR); err != nil {
		return fmt.Errorf("bind the record: %w", err)
	}
	if lfd >= 0 {
		if err := unix.Mkdirat(tfd, logRel, 0o700); err != nil {
			return fmt.Errorf("mkdir: %w", err)
		}
		if err := a.bindReadOnly(lfd, filepath.Join(base, logRel), unix.S_IFREG); err != nil {
			return fmt.Errorf("bind the denial log: %w", err)
		}
	}
	flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if err := unix.Mount("", procFd(tfd), "", flags, ""); err != nil {
		return fmt.Errorf("remount read-only: %w", err)
	}
	return nil
}
