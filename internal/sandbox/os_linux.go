package sandbox

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
)

// Linux's calls for what every Unix does its own way (see doc.go): these
// serve both Linux builds, the accelerated one and -tags dshportable,
// since Linux has no other call for them.

// oPath opens a handle on an object, the link itself for a symlink,
// without reading it: O_PATH.
const oPath = unix.O_PATH

// The portable build's handles (openHandle in portable.go), as Linux
// can make them closest to macOS's: a folder's handle needs search
// permission only (O_PATH|O_DIRECTORY for O_SEARCH), a symlink's is the
// link itself (O_PATH for O_SYMLINK), and a device, fifo or socket is
// never opened (O_PATH, where macOS must open it).
const (
	searchFlags  = unix.O_PATH | unix.O_DIRECTORY | unix.O_NOFOLLOW
	linkFlags    = unix.O_PATH | unix.O_NOFOLLOW
	specialFlags = unix.O_PATH | unix.O_NOFOLLOW
)

// readBack is the path of fd now, from the verified /proc
// (kernel.OpenedPath): Linux has no call such as macOS's F_GETPATH, so
// the portable build reads /proc too.
func readBack(fd int) (string, error) { return kernel.OpenedPath(fd) }

// linkText is the text of the symlink open as the handle fd.
func linkText(fd int) (string, error) { return readlinkat(fd, "") }

// renameNoReplace renames without replacing what is at to (EEXIST):
// renameat2's RENAME_NOREPLACE, Linux's only such call (an older file
// system's EINVAL is the caller's to handle).
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return unix.Renameat2(fromfd, from, tofd, to, unix.RENAME_NOREPLACE)
}

// accessOpened checks the opened file for mode through /proc/self/fd,
// ENOENT where /proc is missing (the caller then checks the name).
func accessOpened(fd uintptr, mode uint32) error {
	return unix.Faccessat(unix.AT_FDCWD, fmt.Sprintf("/proc/self/fd/%d", fd), mode, unix.AT_EACCESS)
}

// landlockABI is the kernel's Landlock ABI version, 0 without one.
func landlockABI() int { return kernel.ABI() }

// restrictWrites has Landlock refuse this process any write outside dirs.
func restrictWrites(dirs []string) error {
	return kernel.RestrictProcessWrites(dirs, []string{os.DevNull})
}

// kernelLayerNote is Layers.Note: none on Linux, where the kernel says.
const kernelLayerNote = ""

// noLandlock is why enforce: landlock cannot be had.
const noLandlock = "landlock is not available on this kernel"

// nameOnDisk is the name as given: one name is one entry here (a file
// system that folds case, as macOS's may, is not folded by the fence).
func nameOnDisk(_ int, name string) string { return name }

// sharedTmp is the temporary folder every user shares, a root with tmp.
func sharedTmp() string { return "/tmp" }

// tmpdirSource names the variable os.TempDir took its folder from, with
// its value, for a refusal's Matched.
func tmpdirSource() string { return "TMPDIR=" + os.Getenv("TMPDIR") }

// windowsName is false: every name but "", "." and ".." is a name here.
const windowsName = false

// osTooBroad are the folders no workspace may be on this OS (roots.go).
var osTooBroad = broadLists{trees: tooBroadTrees, exact: tooBroadExact}
