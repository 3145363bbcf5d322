//go:build windows

package fsys

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/windows"
)

// The calls that change the file system, each on names beneath a
// folder's handle, a reparse point acted on itself (never its target).

// openForChange opens the one name beneath dirfd with access, the
// reparse point itself, and returns it with what it is.
func openForChange(dirfd int, name string, access uint32) (windows.Handle, Stat_t, error) {
	var st Stat_t
	if dirfd == rootFD || dirfd == AT_FDCWD {
		return 0, st, EACCES
	}
	if err := checkOne(name); err != nil {
		return 0, st, err
	}
	h, err := ntCreate(handle(dirfd), name, access|windows.SYNCHRONIZE|windows.FILE_READ_ATTRIBUTES,
		windows.FILE_OPEN, windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return 0, st, err
	}
	if err := Fstat(int(h), &st); err != nil {
		windows.CloseHandle(h)
		return 0, st, err
	}
	return h, st, nil
}

// checkOne is checkName for a name that must be one entry of a folder.
func checkOne(name string) error {
	if name == "" || name == "." || name == ".." {
		return EINVAL
	}
	return checkName(name)
}

// Mkdirat makes the folder name beneath dirfd.
func Mkdirat(dirfd int, name string, mode uint32) error {
	fd, err := Openat(dirfd, name, O_PATH|O_CREAT|O_EXCL|O_DIRECTORY|O_NOFOLLOW, mode)
	if err != nil {
		return err
	}
	return Close(fd)
}

// Unlinkat removes the entry name of dirfd: a reparse point itself, a
// folder only with AT_REMOVEDIR (ENOTDIR for anything else, EISDIR for a
// folder without it). The name goes at once, with POSIX semantics (an
// open handle keeps the file, the name is free), where the volume has
// them (FileDispositionInformationEx), and when the last handle closes
// otherwise (FileDispositionInformation).
func Unlinkat(dirfd int, name string, flags int) error {
	h, st, err := openForChange(dirfd, name, windows.DELETE)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	isDir := st.Mode&S_IFMT == S_IFDIR
	switch {
	case flags&AT_REMOVEDIR != 0 && !isDir:
		return ENOTDIR
	case flags&AT_REMOVEDIR == 0 && isDir:
		return EISDIR
	}
	var ex [4]byte
	binary.LittleEndian.PutUint32(ex[:], windows.FILE_DISPOSITION_DELETE|windows.FILE_DISPOSITION_POSIX_SEMANTICS|
		windows.FILE_DISPOSITION_IGNORE_READONLY_ATTRIBUTE)
	err = ntSetInfo(h, fileDispositionInformationEx, ex[:])
	if err != nil && unsupported(err) {
		err = ntSetInfo(h, fileDispositionInformation, []byte{1})
	}
	return mapErr(err)
}

// Renameat renames old of olddirfd to new of newdirfd, replacing what is
// there (rename(2)).
func Renameat(olddirfd int, old string, newdirfd int, new string) error {
	return rename(olddirfd, old, newdirfd, new, true)
}

// RenameNoReplace renames without replacing what is at new (EEXIST).
func RenameNoReplace(olddirfd int, old string, newdirfd int, new string) error {
	return rename(olddirfd, old, newdirfd, new, false)
}

// rename is NtSetInformationFile(FileRenameInformationEx), what
// SetFileInformationByHandle(FileRenameInfoEx) makes, on old, opened as
// itself, to new beneath newdirfd's handle, with POSIX semantics (a file
// open elsewhere is still replaced, as on Unix); where the volume lacks
// that class, FileRenameInformation, still relative to newdirfd's handle.
// (MoveFileEx, the usual fallback, takes two full paths and would look
// both up again by name.)
func rename(olddirfd int, old string, newdirfd int, new string, replace bool) error {
	if err := checkOne(new); err != nil {
		return err
	}
	if newdirfd == rootFD || newdirfd == AT_FDCWD {
		return EACCES
	}
	h, _, err := openForChange(olddirfd, old, windows.DELETE)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	flags := uint32(windows.FILE_RENAME_POSIX_SEMANTICS)
	if replace {
		flags |= windows.FILE_RENAME_REPLACE_IF_EXISTS
	}
	err = ntSetInfo(h, fileRenameInformationEx, renameInfo(flags, handle(newdirfd), new))
	if err != nil && unsupported(err) {
		var b uint32
		if replace {
			b = 1
		}
		err = ntSetInfo(h, windows.FileRenameInformation, renameInfo(b, handle(newdirfd), new))
		if replace && mapErr(err) == EACCES {
			err = replaceAside(h, newdirfd, new)
		}
	}
	return mapErr(err)
}

// asideSeq names the files replaceAside moves aside.
var asideSeq atomic.Uint64

// replaceAside replaces new of newdirfd by the file open as h where the
// volume has no POSIX rename and the plain rename refuses to replace a
// file some handle holds open (the fence holds the file it replaces,
// locked): new is renamed aside (a file open with delete shared may be
// renamed), h renamed to new, and the aside file marked to go when its
// last handle closes. Not atomic, unlike the POSIX rename: between the
// two renames new is missing, and a process killed there leaves the old
// file aside, under ".NAME.dsh-fs-aside-PID-N". A failed second rename
// puts the old file back.
func replaceAside(h windows.Handle, newdirfd int, new string) error {
	old, _, err := openForChange(newdirfd, new, windows.DELETE)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(old)
	aside := fmt.Sprintf(".%s.dsh-fs-aside-%d-%d", new, os.Getpid(), asideSeq.Add(1))
	if err := checkOne(aside); err != nil {
		return err
	}
	if err := ntSetInfo(old, windows.FileRenameInformation, renameInfo(0, handle(newdirfd), aside)); err != nil {
		return err
	}
	if err := ntSetInfo(h, windows.FileRenameInformation, renameInfo(0, handle(newdirfd), new)); err != nil {
		if back := ntSetInfo(old, windows.FileRenameInformation, renameInfo(0, handle(newdirfd), new)); back != nil {
			return fmt.Errorf("%w; and the file replaced could not be put back from %s: %v", mapErr(err), aside, mapErr(back))
		}
		return err
	}
	// The replace is done; the old file goes with its last handle. Were
	// that refused, it would stay aside: the call still replaced new.
	ntSetInfo(old, fileDispositionInformation, []byte{1})
	return nil
}

// renameInfo is a FILE_RENAME_INFO (and FILE_LINK_INFORMATION, laid out
// the same) on a 64-bit Windows: Flags (or the BOOLEAN ReplaceIfExists)
// at 0, RootDirectory at 8, FileNameLength at 16, FileName at 20.
func renameInfo(flags uint32, root windows.Handle, name string) []byte {
	u := windows.StringToUTF16(name)
	u = u[:len(u)-1]
	b := make([]byte, 20+2*len(u)+2)
	binary.LittleEndian.PutUint32(b[0:], flags)
	binary.LittleEndian.PutUint64(b[8:], uint64(root))
	binary.LittleEndian.PutUint32(b[16:], uint32(2*len(u)))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[20+2*i:], c)
	}
	return b
}

// Linkat makes new of newdirfd a hard link of old of olddirfd, never
// replacing (FileLinkInformation, relative to newdirfd's handle).
func Linkat(olddirfd int, old string, newdirfd int, new string, flags int) error {
	if err := checkOne(new); err != nil {
		return err
	}
	if newdirfd == rootFD || newdirfd == AT_FDCWD {
		return EACCES
	}
	h, st, err := openForChange(olddirfd, old, windows.FILE_WRITE_ATTRIBUTES)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	if st.Mode&S_IFMT == S_IFDIR {
		return EPERM
	}
	return mapErr(ntSetInfo(h, fileLinkInformation, renameInfo(0, handle(newdirfd), new)))
}

// lockOffset is the byte the edit lock takes: Windows' locks are
// mandatory, so a lock on the data would fail others' reads; one byte
// far past any end of file stops only another lock.
const lockOffset = 1<<63 - 2

// lockByte is the OVERLAPPED that names lockOffset to LockFileEx.
func lockByte() *windows.Overlapped {
	return &windows.Overlapped{Offset: uint32(lockOffset & 0xffffffff), OffsetHigh: uint32(lockOffset >> 32)}
}

// Flock takes the edit lock on fd (LOCK_EX only), waiting for it; it goes
// when the handle closes. A folder takes no lock this way (LockFileEx
// fails on its handle): that is EISDIR, what the fence says of a folder
// where a file must be, never a lock pretended. LockFolder locks one.
func Flock(fd int, how int) error {
	if how != LOCK_EX {
		return EINVAL
	}
	err := windows.LockFileEx(handle(fd), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, lockByte())
	if err != nil {
		var st Stat_t
		if Fstat(fd, &st) == nil && st.Mode&S_IFMT == S_IFDIR {
			return EISDIR
		}
	}
	return mapErr(err)
}

// LockFolder takes the lock of the folder open as fd (LOCK_EX only),
// waiting for it; it goes when fd is closed by Close, or the process
// ends: its lock file's (lockFolder). ENOTDIR for anything but a folder.
func LockFolder(fd int, how int) error {
	if how != LOCK_EX {
		return EINVAL
	}
	var st Stat_t
	if err := Fstat(fd, &st); err != nil {
		return err
	}
	if st.Mode&S_IFMT != S_IFDIR {
		return ENOTDIR
	}
	return lockFolder(fd, &st)
}

// Fsync flushes fd to disk; a folder's entries are the file system's
// journal's to keep, as NTFS has no flush of a folder opened to read.
func Fsync(fd int) error {
	err := windows.FlushFileBuffers(handle(fd))
	if err != nil {
		var st Stat_t
		if Fstat(fd, &st) == nil && st.Mode&S_IFMT == S_IFDIR {
			return nil
		}
	}
	return mapErr(err)
}

// Fchmod sets fd's read-only attribute from mode's write bits, the one
// permission bit Windows keeps in a file.
func Fchmod(fd int, mode uint32) error {
	var st Stat_t
	if err := Fstat(fd, &st); err != nil {
		return err
	}
	attrs := st.Attributes &^ windows.FILE_ATTRIBUTE_READONLY
	if mode&0o222 == 0 && st.Mode&S_IFMT == S_IFREG {
		attrs |= windows.FILE_ATTRIBUTE_READONLY
	}
	if attrs == st.Attributes {
		return nil
	}
	if attrs == 0 {
		attrs = windows.FILE_ATTRIBUTE_NORMAL
	}
	var basic [40]byte // FILE_BASIC_INFO: four times (0: unchanged), then FileAttributes
	binary.LittleEndian.PutUint32(basic[32:], attrs)
	return mapErr(setInfo(handle(fd), fileBasicInfo, basic[:]))
}

// Fchown does nothing: a file's owner on Windows is in its access list,
// which the fence leaves as the folder gave it.
func Fchown(int, int, int) error { return nil }

// Faccessat checks that path beneath dirfd may be written (W_OK): a file
// not read-only that opens for writing its data, a folder that opens for
// adding a file. Any other mode checks only that it exists.
func Faccessat(dirfd int, path string, mode uint32, flags int) error {
	open := O_PATH
	if flags&AT_SYMLINK_NOFOLLOW != 0 {
		open |= O_NOFOLLOW
	}
	fd, err := Openat(dirfd, path, open, 0)
	if err != nil || mode&W_OK == 0 {
		if err == nil {
			Close(fd)
		}
		return err
	}
	defer Close(fd)
	var st Stat_t
	if err := Fstat(fd, &st); err != nil {
		return err
	}
	access := uint32(windows.FILE_WRITE_DATA)
	switch st.Mode & S_IFMT {
	case S_IFDIR:
		access = fileAddFile
	case S_IFREG:
		if st.Attributes&windows.FILE_ATTRIBUTE_READONLY != 0 {
			return EACCES
		}
	}
	if fd == rootFD {
		return EACCES
	}
	h, err := ntCreate(handle(fd), "", access|windows.SYNCHRONIZE, windows.FILE_OPEN,
		windows.FILE_SYNCHRONOUS_IO_NONALERT|windows.FILE_OPEN_REPARSE_POINT, 0)
	if err == EBUSY {
		return nil // in use, with the right to write all the same
	}
	if err != nil {
		return err
	}
	windows.CloseHandle(h)
	return nil
}
