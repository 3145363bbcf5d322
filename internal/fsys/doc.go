// Package fsys is the file system calls the fence makes, per OS: the
// subset of x/sys/unix that internal/sandbox, internal/fsops and
// internal/pathmatch call on descriptors, under the same names, so the
// fence's logic is one code for every OS.
//
// On Unix (unix.go) it is x/sys/unix itself: type aliases, the same
// constants, and functions that only call x/sys/unix's (the compiler
// inlines them), so Linux and macOS behave and perform as before the
// layer. On Windows (windows.go and its files) the same subset works on
// handles: a HANDLE is the int of a descriptor, a name is opened beneath
// its folder's handle by NtCreateFile (RootDirectory set) with
// FILE_OPEN_REPARSE_POINT, so a symlink, junction or mount point is
// opened itself and never followed, and every reparse point is reported
// as a symlink (S_IFLNK). Identity is the volume serial number and file
// ID (Stat_t's Dev and Ino), Windows errors are the errno values the
// fence tests (ENOENT, ELOOP, EEXIST, EACCES, EBUSY, ...).
//
// What only one OS has (openat2, O_TMPFILE, O_PATH, getdents, mmap,
// Landlock) is not here: it stays in that OS's files of the packages
// that use it. The repository's audit (e2e/repo) counts a call of this
// package as a call of x/sys/unix, so what a caller may do through it is
// registered exactly as before.
package fsys
