package sandbox

import (
	"errors"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// macOS's calls for what every Unix does its own way (see doc.go).

// oPath asks openRead for a handle on an object, the link itself for a
// symlink. macOS has no O_PATH: openHandle (portable.go) opens a folder
// with O_SEARCH (search permission is enough, as for O_PATH), a symlink
// with O_SYMLINK, and anything else read-only without blocking, which
// needs read permission on the object and runs a device's open. The bit
// is O_SYMLINK's, which no open of openHandle passes on.
const oPath = unix.O_SYMLINK

const (
	searchFlags  = unix.O_SEARCH | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW
	linkFlags    = unix.O_RDONLY | unix.O_SYMLINK | unix.O_NONBLOCK // O_NOFOLLOW would refuse the link
	specialFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_NOFOLLOW
)

// readBack is the path of fd now: fcntl(F_GETPATH), into a MAXPATHLEN
// buffer (x/sys has no pointer form of fcntl for darwin).
func readBack(fd int) (string, error) {
	var buf [1024]byte // MAXPATHLEN
	_, _, errno := unix.Syscall(unix.SYS_FCNTL, uintptr(fd), unix.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return "", errno
	}
	return cString(buf[:])
}

// linkText is the text of the symlink open as the handle fd. macOS reads
// a link only by name: the name read back, checked to be the same link
// after the read (linkByName).
func linkText(fd int) (string, error) { return linkByName(fd, readBack) }

// renameNoReplace renames without replacing what is at to (EEXIST):
// renameatx_np's RENAME_EXCL.
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return unix.RenameatxNp(fromfd, from, tofd, to, unix.RENAME_EXCL)
}

// accessOpened has no /proc to go through on macOS: ENOENT, so the
// caller checks the name it verified to be the opened file.
func accessOpened(uintptr, uint32) error { return unix.ENOENT }

// landlockABI is 0: macOS has no Landlock. The file tool's kernel layer
// there is none; dsh-fs exec's Seatbelt profile is exec's own.
func landlockABI() int { return 0 }

func restrictWrites([]string) error { return errors.New(noLandlock) }

// kernelLayerNote is Layers.Note on macOS.
const kernelLayerNote = "macOS has no Landlock: the file tool's writes are held by the fence and its confined handles, without a kernel layer"

// noLandlock is why enforce: landlock cannot be had.
const noLandlock = "landlock does not exist on macOS"

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
