package sandbox

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Windows' calls for what every OS does its own way (see doc.go). The
// walk and the handles are the portable build's (portable.go) over
// internal/fsys's handles: every name opened beneath its folder's handle
// by NtCreateFile, a reparse point opened itself and never followed.

// oPath opens a handle on an object, a reparse point itself, with no
// right to its data: fsys's O_PATH.
const oPath = fsys.O_PATH

// The portable build's handles: a folder's, a link's, and anything
// else's, all fsys's O_PATH handles, which never open a device.
const (
	searchFlags  = fsys.O_PATH | fsys.O_DIRECTORY | fsys.O_NOFOLLOW
	linkFlags    = fsys.O_PATH | fsys.O_NOFOLLOW
	specialFlags = fsys.O_PATH | fsys.O_NOFOLLOW
)

// readBack is the path of fd now, GetFinalPathNameByHandle's (long
// names, the case on disk), as the fence's slash path.
func readBack(fd int) (string, error) { return fsys.FinalPath(fd) }

// linkText is the target of the reparse point open as the handle fd.
func linkText(fd int) (string, error) { return readlinkat(fd, "") }

// renameNoReplace renames without replacing what is at to (EEXIST):
// FileRenameInformationEx without REPLACE_IF_EXISTS.
func renameNoReplace(fromfd int, from string, tofd int, to string) error {
	return fsys.RenameNoReplace(fromfd, from, tofd, to)
}

// accessOpened has no /proc to go through: ENOENT, so the caller checks
// the name it verified to be the opened file.
func accessOpened(uintptr, uint32) error { return fsys.ENOENT }

// landlockABI is 0: Windows has no Landlock.
func landlockABI() int { return 0 }

func restrictWrites([]string) error { return errors.New(noLandlock) }

// kernelLayerNote is Layers.Note on Windows.
const kernelLayerNote = "Windows has no Landlock: the file tool's writes are held by the fence and its confined handles, without a kernel layer"

// noLandlock is why enforce: landlock cannot be had.
const noLandlock = "landlock does not exist on Windows"

// nameOnDisk is the name the object open as fd has in its folder, as the
// folder holds it: the case on disk and the long name, not the spelling
// given ("PROJ", "PROGRA~1"), so the canonical path the fence decides on
// is the opened object's (GetFinalPathNameByHandle, normalized). Where
// that cannot be read, the name as given.
func nameOnDisk(fd int, name string) string {
	p, err := fsys.FinalPath(fd)
	if err != nil || p == "/" {
		return name
	}
	return baseOf(p)
}

// sharedTmp is the temporary folder Windows gives the user,
// %LOCALAPPDATA%\Temp, taken from the shell's known folder
// (SHGetKnownFolderPath), never from TMP or TEMP, which a call can set:
// os.TempDir's answer is a root only beneath an allowed one, as TMPDIR's
// is on Unix. "" where the known folder cannot be read.
func sharedTmp() string {
	local, err := fsys.LocalAppData()
	if err != nil {
		return ""
	}
	return filepath.Join(local, "Temp")
}

// tmpdirSource names the variable os.TempDir took its folder from (TMP,
// then TEMP), with its value, for a refusal's Matched.
func tmpdirSource() string {
	for _, k := range []string{"TMP", "TEMP"} {
		if v := os.Getenv(k); v != "" {
			return k + "=" + v
		}
	}
	return "USERPROFILE=" + os.Getenv("USERPROFILE")
}

// windowsName says whether a name the walk opens can be refused as no
// plain file name (EINVAL: a stream, a device, a trailing dot): Windows.
const windowsName = true

// osTooBroad are the folders no workspace may be on Windows (roots.go).
var osTooBroad = windowsTooBroad
