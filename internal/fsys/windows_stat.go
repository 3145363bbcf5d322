//go:build windows

package fsys

import (
	"encoding/binary"
	"errors"
	"math/bits"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// Information classes of GetFileInformationByHandleEx and
// SetFileInformationByHandle that x/sys/windows does not name.
const (
	fileBasicInfo        = 0
	fileEndOfFileInfo    = 6
	fileAttributeTagInfo = 9

	// NtSetInformationFile's classes.
	fileLinkInformation          = 11
	fileDispositionInformation   = 13
	fileDispositionInformationEx = 64
	fileRenameInformationEx      = 65

	symlinkFlagRelative = 1 // SYMLINK_FLAG_RELATIVE of a symlink's reparse data
)

// Fstat fills st from the handle fd: identity from FileIdInfo (the
// volume serial number and the 128-bit file ID), or from
// GetFileInformationByHandle where the volume has no FileIdInfo; every
// reparse point is a symlink.
func Fstat(fd int, st *Stat_t) error {
	*st = Stat_t{}
	if fd == rootFD {
		st.Mode, st.Nlink = S_IFDIR|0o555, 1
		return nil
	}
	h := handle(fd)
	var bi windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &bi); err != nil {
		return mapErr(err)
	}
	st.Dev = uint64(bi.VolumeSerialNumber)
	st.Ino = uint64(bi.FileIndexHigh)<<32 | uint64(bi.FileIndexLow)
	var id [24]byte // FILE_ID_INFO: VolumeSerialNumber, FileId[16]
	if windows.GetFileInformationByHandleEx(h, windows.FileIdInfo, &id[0], uint32(len(id))) == nil {
		st.Dev = binary.LittleEndian.Uint64(id[0:8])
		lo, hi := binary.LittleEndian.Uint64(id[8:16]), binary.LittleEndian.Uint64(id[16:24])
		// NTFS's IDs are 64 bits (hi is 0, lo the same index as above);
		// ReFS's 128: hi folded in so IDs that differ only there differ.
		st.Ino = lo ^ bits.RotateLeft64(hi*0x9E3779B97F4A7C15, 32)
	}
	st.Attributes = bi.FileAttributes
	st.Nlink = bi.NumberOfLinks
	st.Size = int64(bi.FileSizeHigh)<<32 | int64(bi.FileSizeLow)
	ns := bi.LastWriteTime.Nanoseconds()
	st.Mtim = Timespec{Sec: ns / 1e9, Nsec: ns % 1e9}
	st.Ctim = st.Mtim
	switch {
	case bi.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		var tag [8]byte // FILE_ATTRIBUTE_TAG_INFO: FileAttributes, ReparseTag
		if windows.GetFileInformationByHandleEx(h, fileAttributeTagInfo, &tag[0], uint32(len(tag))) == nil {
			st.ReparseTag = binary.LittleEndian.Uint32(tag[4:8])
		}
		st.Mode = S_IFLNK | 0o777
	case bi.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		st.Mode = S_IFDIR | 0o777
	default:
		st.Mode = S_IFREG | 0o666
	}
	if bi.FileAttributes&windows.FILE_ATTRIBUTE_READONLY != 0 && st.Mode&S_IFMT == S_IFREG {
		st.Mode &^= 0o222
	}
	return nil
}

// Fstatat looks at path beneath dirfd ("" is dirfd itself), the link
// itself under AT_SYMLINK_NOFOLLOW.
func Fstatat(dirfd int, path string, st *Stat_t, flags int) error {
	if path == "" && dirfd != AT_FDCWD {
		return Fstat(dirfd, st)
	}
	open := O_PATH
	if flags&AT_SYMLINK_NOFOLLOW != 0 {
		open |= O_NOFOLLOW
	}
	fd, err := Openat(dirfd, path, open, 0)
	if err != nil {
		return err
	}
	defer Close(fd)
	return Fstat(fd, st)
}

// Lstat looks at an absolute path of the fence's form, a final link
// itself.
func Lstat(path string, st *Stat_t) error { return Fstatat(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW) }

// Readlinkat reads the target of the reparse point path beneath dirfd
// ("" is dirfd itself) into buf, as the fence's slash path: a relative
// symlink's text with its backslashes as slashes, an absolute symlink's
// or a junction's drive path as "/C:/…". A reparse point of another
// kind, or a target on no drive letter (a volume GUID, a UNC share), is
// EINVAL: it is never followed.
func Readlinkat(dirfd int, path string, buf []byte) (int, error) {
	fd := dirfd
	if path != "" {
		var err error
		if fd, err = Openat(dirfd, path, O_PATH|O_NOFOLLOW, 0); err != nil {
			return 0, err
		}
		defer Close(fd)
	}
	data := make([]byte, windows.MAXIMUM_REPARSE_DATA_BUFFER_SIZE)
	var n uint32
	if err := windows.DeviceIoControl(handle(fd), windows.FSCTL_GET_REPARSE_POINT, nil, 0, &data[0], uint32(len(data)), &n, nil); err != nil {
		return 0, mapErr(err)
	}
	text, err := reparseText(data[:n])
	if err != nil {
		return 0, err
	}
	return copy(buf, text), nil
}

// reparseText is the fence's text of a reparse point's data.
func reparseText(d []byte) (string, error) {
	if len(d) < 16 {
		return "", EINVAL
	}
	tag := binary.LittleEndian.Uint32(d[0:4])
	start := 16 // the mount point's PathBuffer
	relative := false
	switch tag {
	case windows.IO_REPARSE_TAG_SYMLINK:
		if len(d) < 20 {
			return "", EINVAL
		}
		relative = binary.LittleEndian.Uint32(d[16:20])&symlinkFlagRelative != 0
		start = 20
	case windows.IO_REPARSE_TAG_MOUNT_POINT:
	default:
		return "", EINVAL
	}
	off, size := int(binary.LittleEndian.Uint16(d[8:10])), int(binary.LittleEndian.Uint16(d[10:12]))
	if start+off+size > len(d) || size%2 != 0 {
		return "", EINVAL
	}
	u := make([]uint16, size/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(d[start+off+2*i:])
	}
	name := windows.UTF16ToString(u)
	if relative {
		return strings.ReplaceAll(name, `\`, "/"), nil
	}
	return FromNT(name)
}

// FromNT is the fence's path of an NT path of a drive (`\??\C:\x` or
// `\\?\C:\x`): "/C:/x". Any other NT path is EINVAL.
func FromNT(p string) (string, error) {
	rest, ok := strings.CutPrefix(p, `\??\`)
	if !ok {
		if rest, ok = strings.CutPrefix(p, `\\?\`); !ok {
			return "", EINVAL
		}
	}
	if len(rest) < 2 || !isDrive(rest[:2]) || len(rest) > 2 && rest[2] != '\\' {
		return "", EINVAL
	}
	return "/" + strings.ToUpper(rest[:1]) + ":" + strings.ReplaceAll(strings.TrimRight(rest[2:], `\`), `\`, "/"), nil
}

// FinalPath is the fence's path of what fd is open on now, read back by
// GetFinalPathNameByHandle: normalized (the long names, the case on
// disk), on its drive letter.
func FinalPath(fd int) (string, error) {
	if fd == rootFD {
		return "/", nil
	}
	buf := make([]uint16, 512)
	for {
		n, err := windows.GetFinalPathNameByHandle(handle(fd), &buf[0], uint32(len(buf)), 0 /* FILE_NAME_NORMALIZED|VOLUME_NAME_DOS */)
		if err != nil {
			return "", mapErr(err)
		}
		if int(n) < len(buf) {
			p, err := FromNT(windows.UTF16ToString(buf[:n]))
			if err == nil && p == "" {
				p = "/"
			}
			return p, err
		}
		buf = make([]uint16, n+1)
	}
}

// ntStatusErrno maps the NTSTATUS values the fence meets to Unix's.
var ntStatusErrno = map[windows.NTStatus]error{
	windows.STATUS_OBJECT_NAME_NOT_FOUND:      ENOENT,
	windows.STATUS_OBJECT_PATH_NOT_FOUND:      ENOENT,
	windows.STATUS_NO_SUCH_FILE:               ENOENT,
	windows.STATUS_DELETE_PENDING:             ENOENT,
	windows.STATUS_OBJECT_NAME_COLLISION:      EEXIST,
	windows.STATUS_NOT_A_DIRECTORY:            ENOTDIR,
	windows.STATUS_FILE_IS_A_DIRECTORY:        EISDIR,
	windows.STATUS_ACCESS_DENIED:              EACCES,
	windows.STATUS_CANNOT_DELETE:              EACCES,
	windows.STATUS_SHARING_VIOLATION:          EBUSY,
	windows.STATUS_DIRECTORY_NOT_EMPTY:        ENOTEMPTY,
	windows.STATUS_OBJECT_NAME_INVALID:        EINVAL,
	windows.STATUS_INVALID_PARAMETER:          EINVAL,
	windows.STATUS_NOT_SAME_DEVICE:            EXDEV,
	windows.STATUS_STOPPED_ON_SYMLINK:         ELOOP,
	windows.STATUS_REPARSE_POINT_NOT_RESOLVED: ELOOP,
	windows.STATUS_NOT_SUPPORTED:              ENOTSUP,
	windows.STATUS_NOT_IMPLEMENTED:            ENOTSUP,
	windows.STATUS_INVALID_INFO_CLASS:         ENOTSUP,
	windows.STATUS_MEDIA_WRITE_PROTECTED:      EROFS,
	windows.STATUS_NAME_TOO_LONG:              ENAMETOOLONG,
	windows.STATUS_NOT_A_REPARSE_POINT:        EINVAL,
}

// winErrno maps the Win32 errors the fence meets to Unix's.
var winErrno = map[syscall.Errno]error{
	windows.ERROR_FILE_NOT_FOUND:        ENOENT,
	windows.ERROR_PATH_NOT_FOUND:        ENOENT,
	windows.ERROR_BAD_NETPATH:           ENOENT,
	windows.ERROR_DELETE_PENDING:        ENOENT,
	windows.ERROR_ALREADY_EXISTS:        EEXIST,
	windows.ERROR_FILE_EXISTS:           EEXIST,
	windows.ERROR_DIRECTORY:             ENOTDIR,
	windows.ERROR_ACCESS_DENIED:         EACCES,
	windows.ERROR_SHARING_VIOLATION:     EBUSY,
	windows.ERROR_LOCK_VIOLATION:        EBUSY,
	windows.ERROR_DIR_NOT_EMPTY:         ENOTEMPTY,
	windows.ERROR_INVALID_NAME:          EINVAL,
	windows.ERROR_INVALID_PARAMETER:     EINVAL,
	windows.ERROR_NOT_A_REPARSE_POINT:   EINVAL,
	windows.ERROR_NOT_SAME_DEVICE:       EXDEV,
	windows.ERROR_WRITE_PROTECT:         EROFS,
	windows.ERROR_NOT_SUPPORTED:         ENOTSUP,
	windows.ERROR_INVALID_FUNCTION:      ENOTSUP,
	windows.ERROR_CANT_ACCESS_FILE:      ELOOP,
	windows.ERROR_CANT_RESOLVE_FILENAME: ELOOP,
	windows.ERROR_STOPPED_ON_SYMLINK:    ELOOP,
	windows.ERROR_FILENAME_EXCED_RANGE:  ENAMETOOLONG,
	windows.ERROR_INVALID_HANDLE:        EBADF,
	windows.ERROR_HANDLE_DISK_FULL:      syscall.ENOSPC,
	windows.ERROR_DISK_FULL:             syscall.ENOSPC,
}

// mapErr is err with a Windows error given as the errno the fence tests;
// errors.Is still finds the fs.Err values (syscall.Errno's Is knows
// them).
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	var st windows.NTStatus
	if errors.As(err, &st) {
		if e, ok := ntStatusErrno[st]; ok {
			return e
		}
		err = st.Errno()
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		if m, ok := winErrno[e]; ok {
			return m
		}
		return e
	}
	return err
}

// setInfo is SetFileInformationByHandle of class with buf.
func setInfo(h windows.Handle, class uint32, buf []byte) error {
	return windows.SetFileInformationByHandle(h, class, &buf[0], uint32(len(buf)))
}

// ntSetInfo is NtSetInformationFile of class with buf.
func ntSetInfo(h windows.Handle, class uint32, buf []byte) error {
	var iosb windows.IO_STATUS_BLOCK
	return windows.NtSetInformationFile(h, &iosb, &buf[0], uint32(len(buf)), class)
}

// truncate cuts the file h to nothing.
func truncate(h windows.Handle) error {
	var eof [8]byte
	return mapErr(setInfo(h, fileEndOfFileInfo, eof[:]))
}

// unsupported reports whether err says the volume lacks an information
// class (FAT, a network share, an older Windows): the caller falls back.
func unsupported(err error) bool {
	var st windows.NTStatus
	if errors.As(err, &st) {
		err = st.Errno()
	}
	return err == windows.ERROR_INVALID_PARAMETER || err == windows.ERROR_NOT_SUPPORTED ||
		err == windows.ERROR_INVALID_FUNCTION || err == windows.ERROR_CALL_NOT_IMPLEMENTED
}
