//go:build windows

package fsys

import (
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Windows: the subset over handles (see doc.go). A descriptor is a
// HANDLE as an int; AT_FDCWD and the fence's root "/" are values no
// handle takes.
//
// The fence's paths are slash paths from "/": on Windows "/" is a root of
// its own whose names are the drive letters ("/C:/Users/me/proj" is
// C:\Users\me\proj, see FromOS and ToOS), so the fence's walk, which
// opens one name at a time beneath its folder's handle, is the same code
// as on Unix. Every name is opened by NtCreateFile relative to its
// folder's handle with FILE_OPEN_REPARSE_POINT: a symlink, junction or
// mount point is opened itself, never followed, and reported as a
// symlink (S_IFLNK) whose text is its target (Readlinkat). A name that
// Win32 would read as something else (a stream "a:b", a device "NUL",
// a trailing dot or space, a wildcard) is refused with EINVAL (checkName).

// Stat_t is what the fence reads of an opened object, under Unix's field
// names: Dev is the volume serial number and Ino the file ID, so two
// spellings of one file (a case, an 8.3 alias, a junction's target)
// are the same object and nothing else is.
type Stat_t struct {
	Dev        uint64
	Ino        uint64
	Mode       uint32
	Nlink      uint32
	Uid, Gid   uint32 // always 0: Windows has access lists, not owners by number
	Size       int64
	Mtim       Timespec
	Ctim       Timespec // the last write too: Windows' change time costs another call, and nothing here trusts it
	Attributes uint32   // FILE_ATTRIBUTE_*
	ReparseTag uint32   // IO_REPARSE_TAG_*, where Attributes has FILE_ATTRIBUTE_REPARSE_POINT
}

// Timespec is a time as Unix's.
type Timespec struct{ Sec, Nsec int64 }

// Unix is t as seconds and nanoseconds, as x/sys/unix's Timespec gives.
func (t Timespec) Unix() (sec, nsec int64) { return t.Sec, t.Nsec }

// Errno is a system call's error number: the fence tests syscall's
// invented Unix values, which Windows errors are mapped to (mapErr).
type Errno = syscall.Errno

// Open flags, Linux's values; only this package reads them.
const (
	O_RDONLY    = 0x0
	O_WRONLY    = 0x1
	O_RDWR      = 0x2
	O_CREAT     = 0x40
	O_EXCL      = 0x80
	O_NOCTTY    = 0x100
	O_TRUNC     = 0x200
	O_NONBLOCK  = 0x800
	O_DIRECTORY = 0x10000
	O_NOFOLLOW  = 0x20000
	O_CLOEXEC   = 0x80000
	// O_PATH opens a handle on the object itself, to look at it and to
	// open beneath it, with no right to read or write its data.
	O_PATH = 0x200000
)

const (
	AT_FDCWD            = -100
	AT_SYMLINK_NOFOLLOW = 0x100
	AT_REMOVEDIR        = 0x200
	AT_EACCESS          = 0x200

	DT_UNKNOWN = 0
	DT_DIR     = 4
	DT_REG     = 8
	DT_LNK     = 10
	DT_SOCK    = 12

	LOCK_EX = 2
	W_OK    = 2

	S_IFMT   = 0xf000
	S_IFSOCK = 0xc000
	S_IFLNK  = 0xa000
	S_IFREG  = 0x8000
	S_IFBLK  = 0x6000
	S_IFDIR  = 0x4000
	S_IFCHR  = 0x2000
	S_IFIFO  = 0x1000
	S_ISUID  = 0x800
	S_ISGID  = 0x400
	S_ISVTX  = 0x200

	// PathMax is the longest path the fence takes: Windows' long paths.
	PathMax = 32767
)

// The errors the fence tests, syscall's values on Windows.
const (
	EACCES       = syscall.EACCES
	EAGAIN       = syscall.EAGAIN
	EBADF        = syscall.EBADF
	EBUSY        = syscall.EBUSY
	EEXIST       = syscall.EEXIST
	EINTR        = syscall.EINTR
	EINVAL       = syscall.EINVAL
	EIO          = syscall.EIO
	EISDIR       = syscall.EISDIR
	ELOOP        = syscall.ELOOP
	ENAMETOOLONG = syscall.ENAMETOOLONG
	ENOENT       = syscall.ENOENT
	ENOSYS       = syscall.ENOSYS
	ENOTEMPTY    = syscall.ENOTEMPTY
	ENOTSUP      = syscall.ENOTSUP
	EOPNOTSUPP   = syscall.EOPNOTSUPP
	EPERM        = syscall.EPERM
	EROFS        = syscall.EROFS
	ETXTBSY      = syscall.ETXTBSY
	EXDEV        = syscall.EXDEV
)

// ENOTDIR is a name used as a folder that is none. It is not
// syscall.ENOTDIR itself: on Windows that is ERROR_PATH_NOT_FOUND, which
// errors.Is takes for fs.ErrNotExist, so a file opened as a folder read
// as a missing one (FS_NOT_FOUND where Linux says FS_NOT_DIR). It is
// syscall.ENOTDIR to errors.Is and errors.As, and never fs.ErrNotExist.
var ENOTDIR error = notDir{}

type notDir struct{}

func (notDir) Error() string { return "not a folder" }

// Is reports whether target is syscall.ENOTDIR: fs.ErrNotExist is not.
func (notDir) Is(target error) bool { return target == syscall.ENOTDIR }

// As sets a *syscall.Errno target to syscall.ENOTDIR, as fserr reads it.
func (notDir) As(target any) bool {
	p, ok := target.(*syscall.Errno)
	if ok {
		*p = syscall.ENOTDIR
	}
	return ok
}

// Access rights x/sys/windows does not name.
const (
	fileTraverse = 0x20       // FILE_TRAVERSE
	fileAddFile  = 0x2        // FILE_ADD_FILE
	readControl  = 0x00020000 // READ_CONTROL
)

// rootFD is the handle of the fence's "/", whose names are the drives.
const rootFD = -200

// handle is fd as a HANDLE.
func handle(fd int) windows.Handle { return windows.Handle(uintptr(fd)) }

// shareAll lets others read, write, rename and delete what is open here,
// as Unix does: a handle the fence holds never blocks another program.
const shareAll = windows.FILE_SHARE_READ | windows.FILE_SHARE_WRITE | windows.FILE_SHARE_DELETE

// Openat opens path beneath the folder dirfd (one name, or several
// walked one at a time, never through a reparse point), or an absolute
// path of the fence's form with AT_FDCWD.
func Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	if dirfd == AT_FDCWD {
		return openAbs(path, flags, mode)
	}
	names := splitNames(path)
	if len(names) == 0 {
		return openName(dirfd, "", flags, mode)
	}
	dir, own := dirfd, false
	for _, name := range names[:len(names)-1] {
		fd, err := openName(dir, name, O_PATH|O_DIRECTORY|O_NOFOLLOW, 0)
		if own {
			Close(dir)
		}
		if err != nil {
			return -1, err
		}
		dir, own = fd, true
	}
	fd, err := openName(dir, names[len(names)-1], flags, mode)
	if own {
		Close(dir)
	}
	return fd, err
}

// Open opens an absolute path of the fence's form.
func Open(path string, flags int, mode uint32) (int, error) {
	return Openat(AT_FDCWD, path, flags, mode)
}

// splitNames splits a relative path at its slashes and backslashes; "."
// components are dropped.
func splitNames(p string) []string {
	var out []string
	for _, s := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if s != "." {
			out = append(out, s)
		}
	}
	return out
}

// openAbs opens an absolute path of the fence's form ("/", "/C:/x"). The
// kernel resolves the folders on the way, as an open by path does on
// Unix; the last name is not followed under O_NOFOLLOW.
func openAbs(path string, flags int, mode uint32) (int, error) {
	names := splitNames(path)
	if !strings.HasPrefix(path, "/") {
		return -1, EINVAL
	}
	if len(names) == 0 {
		if flags&(O_WRONLY|O_RDWR|O_CREAT) != 0 {
			return -1, EACCES
		}
		return rootFD, nil
	}
	if !isDrive(names[0]) {
		return -1, ENOENT
	}
	for _, n := range names[1:] {
		if err := checkName(n); err != nil {
			return -1, err
		}
	}
	fd, err := ntOpen(0, ntPath(names), flags, mode)
	if err == ENOENT && len(names) > 2 && fileOnTheWay(names[:len(names)-1]) {
		return -1, ENOTDIR
	}
	return fd, err
}

// ntPath is the NT path of a drive and the names beneath it.
func ntPath(names []string) string {
	return `\??\` + names[0] + `\` + strings.Join(names[1:], `\`)
}

// fileOnTheWay reports whether the nearest of the folders names and its
// ancestors that exists is no folder. Windows fails an open by a path
// through a file as a missing path (STATUS_OBJECT_PATH_NOT_FOUND);
// Linux's ENOTDIR is told apart by what is there.
func fileOnTheWay(names []string) bool {
	for n := len(names); n > 1; n-- {
		fd, err := ntOpen(0, ntPath(names[:n]), O_PATH|O_NOFOLLOW, 0)
		if err == ENOENT {
			continue
		}
		if err != nil {
			return false
		}
		var st Stat_t
		err = Fstat(fd, &st)
		Close(fd)
		return err == nil && st.Mode&S_IFMT != S_IFDIR
	}
	return false
}

// isDrive reports whether name is a drive letter and its colon ("C:").
func isDrive(name string) bool {
	return len(name) == 2 && name[1] == ':' && ('A' <= name[0] && name[0] <= 'Z' || 'a' <= name[0] && name[0] <= 'z')
}

// openName opens one name ("" for the folder itself) beneath dirfd.
func openName(dirfd int, name string, flags int, mode uint32) (int, error) {
	if name == ".." {
		return -1, EINVAL // the fence walks ".." by the folder it held, never by name
	}
	if dirfd == rootFD {
		switch {
		case name == "":
			return rootFD, nil
		case !isDrive(name):
			return -1, ENOENT
		}
		return ntOpen(0, `\??\`+strings.ToUpper(name)+`\`, flags|O_DIRECTORY, mode)
	}
	if err := checkName(name); err != nil {
		return -1, err
	}
	return ntOpenAt(handle(dirfd), name, flags, mode)
}

// reserved are the device names Win32 finds in every folder, with any
// extension: a file of that name cannot be used by Windows programs.
var reserved = map[string]bool{
	"CON": true, "PRN": true, "AUX": true, "NUL": true, "CONIN$": true, "CONOUT$": true,
	"COM1": true, "COM2": true, "COM3": true, "COM4": true, "COM5": true, "COM6": true, "COM7": true, "COM8": true, "COM9": true,
	"COM¹": true, "COM²": true, "COM³": true,
	"LPT1": true, "LPT2": true, "LPT3": true, "LPT4": true, "LPT5": true, "LPT6": true, "LPT7": true, "LPT8": true, "LPT9": true,
	"LPT¹": true, "LPT²": true, "LPT³": true,
}

// checkName refuses (EINVAL) a name that is not one plain file name to
// Windows: a stream ("a.txt:secret", "a.txt::$DATA"), a name ending in a
// dot or a space (Win32 drops them, so the name would alias another), a
// device name (CON, NUL.txt), a wildcard or a control character. The
// fence then never reaches a file by a spelling its rules do not see.
func checkName(name string) error {
	if name == "" || name == "." {
		return nil
	}
	if len(name) > 255 {
		return ENAMETOOLONG
	}
	if strings.ContainsAny(name, `:<>"|?*\/`) || strings.HasSuffix(name, ".") || strings.HasSuffix(name, " ") {
		return EINVAL
	}
	for _, r := range name {
		if r < 32 {
			return EINVAL
		}
	}
	base, _, _ := strings.Cut(name, ".")
	if reserved[strings.ToUpper(strings.TrimRight(base, " "))] {
		return EINVAL
	}
	return nil
}

// ntOpenAt opens name beneath the folder h.
func ntOpenAt(h windows.Handle, name string, flags int, mode uint32) (int, error) {
	return ntOpen(h, name, flags, mode)
}

// ntOpen opens name (beneath root, or an NT path with root 0) by
// NtCreateFile: a reparse point is the object (FILE_OPEN_REPARSE_POINT)
// and, under O_NOFOLLOW, refused with ELOOP unless only a handle
// (O_PATH) was asked for, and refused where a folder must be (ELOOP
// under O_NOFOLLOW, ENOTDIR otherwise), as Unix refuses a symlink there.
// O_TRUNC truncates only once the object is known to be no reparse point.
func ntOpen(root windows.Handle, name string, flags int, mode uint32) (int, error) {
	access, disposition, options, attrs := openArgs(flags, mode)
	h, err := ntCreate(root, name, access, disposition, options, attrs)
	if err != nil {
		return -1, err
	}
	fd := int(h)
	var st Stat_t
	if err := Fstat(fd, &st); err != nil {
		Close(fd)
		return -1, err
	}
	switch typ := st.Mode & S_IFMT; {
	case typ == S_IFLNK && flags&O_NOFOLLOW != 0 && (flags&O_PATH == 0 || flags&O_DIRECTORY != 0):
		Close(fd)
		return -1, ELOOP
	case typ == S_IFLNK && flags&O_DIRECTORY != 0:
		Close(fd)
		return -1, ENOTDIR
	case typ == S_IFDIR && flags&(O_WRONLY|O_RDWR) != 0:
		Close(fd)
		return -1, syscall.EISDIR
	}
	if flags&O_TRUNC != 0 && st.Size != 0 {
		if err := truncate(h); err != nil {
			Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

// ntCreate is NtCreateFile of name beneath root (the folder itself for
// ""), case-insensitive as Win32's opens are, sharing everything.
func ntCreate(root windows.Handle, name string, access, disposition, options, attrs uint32) (windows.Handle, error) {
	u := &windows.NTUnicodeString{}
	if name != "" {
		var err error
		if u, err = windows.NewNTUnicodeString(name); err != nil {
			return 0, EINVAL
		}
	}
	oa := &windows.OBJECT_ATTRIBUTES{RootDirectory: root, ObjectName: u, Attributes: windows.OBJ_CASE_INSENSITIVE}
	oa.Length = uint32(unsafe.Sizeof(*oa))
	var h windows.Handle
	var iosb windows.IO_STATUS_BLOCK
	err := windows.NtCreateFile(&h, access, oa, &iosb, nil, attrs, shareAll, disposition, options, 0, 0)
	if err != nil {
		return 0, mapErr(err)
	}
	return h, nil
}

// openArgs are NtCreateFile's arguments for Unix's open flags and mode.
func openArgs(flags int, mode uint32) (access, disposition, options, attrs uint32) {
	access = windows.SYNCHRONIZE | windows.FILE_READ_ATTRIBUTES | readControl
	switch {
	case flags&O_PATH != 0: // a handle only: no right to the data
	case flags&O_RDWR != 0:
		access |= windows.FILE_GENERIC_READ | windows.FILE_GENERIC_WRITE
	case flags&O_WRONLY != 0:
		access |= windows.FILE_GENERIC_WRITE
	default:
		access |= windows.FILE_GENERIC_READ
	}
	if flags&O_DIRECTORY != 0 && flags&O_PATH == 0 {
		access |= windows.FILE_LIST_DIRECTORY | fileTraverse
	}
	if flags&O_PATH != 0 && flags&O_DIRECTORY != 0 {
		access |= fileTraverse
	}
	disposition = windows.FILE_OPEN
	switch {
	case flags&O_CREAT != 0 && flags&O_EXCL != 0:
		disposition = windows.FILE_CREATE
	case flags&O_CREAT != 0:
		disposition = windows.FILE_OPEN_IF
	}
	// No FILE_OPEN_FOR_BACKUP_INTENT: with a backup privilege enabled it
	// would pass over the access lists.
	options = windows.FILE_SYNCHRONOUS_IO_NONALERT
	if flags&O_NOFOLLOW != 0 {
		options |= windows.FILE_OPEN_REPARSE_POINT
	}
	if flags&O_DIRECTORY != 0 {
		options |= windows.FILE_DIRECTORY_FILE
	} else if flags&O_CREAT != 0 {
		options |= windows.FILE_NON_DIRECTORY_FILE
	}
	attrs = windows.FILE_ATTRIBUTE_NORMAL
	if flags&O_CREAT != 0 && mode&0o222 == 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	return access, disposition, options, attrs
}

// Close closes the handle fd; the fence's root is no handle.
func Close(fd int) error {
	if fd == rootFD {
		return nil
	}
	unlockFolder(fd)
	return mapErr(windows.CloseHandle(handle(fd)))
}

// Read reads from fd.
func Read(fd int, p []byte) (int, error) {
	n, err := windows.Read(handle(fd), p)
	if err == windows.ERROR_HANDLE_EOF || err == windows.ERROR_BROKEN_PIPE {
		return n, nil
	}
	return n, mapErr(err)
}

// Seek sets fd's offset.
func Seek(fd int, offset int64, whence int) (int64, error) {
	off, err := windows.Seek(handle(fd), offset, whence)
	return off, mapErr(err)
}
