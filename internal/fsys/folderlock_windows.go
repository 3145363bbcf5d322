package fsys

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/windows"
)

// Windows locks no folder (LockFileEx fails on a folder's handle), and
// the fence locks a root while a write there may complete a git folder
// (flock on Unix). A folder's lock is therefore a byte of a file of its
// own, named by the folder's identity (volume serial and file ID) in the
// user's %LOCALAPPDATA%\dsh-fs\locks, from the known folder: it excludes
// every dsh-fs call of this user on that folder, whatever its path, and
// goes, as flock's does, when the folder's handle closes or the process
// ends. Another user's calls take another file.

// folderLocks are the lock files' handles held, by the folder's fd.
var folderLocks = struct {
	sync.Mutex
	held map[int]windows.Handle
}{held: map[int]windows.Handle{}}

// lockFolder takes the lock of the folder open as fd, whose identity is
// st, waiting for it.
func lockFolder(fd int, st *Stat_t) error {
	dir, err := folderLockDir()
	if err != nil {
		return fmt.Errorf("the folder lock's folder: %w", err)
	}
	u, err := windows.UTF16PtrFromString(folderLockFile(dir, st))
	if err != nil {
		return EINVAL
	}
	h, err := windows.CreateFile(u, windows.GENERIC_READ|windows.GENERIC_WRITE,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_ALWAYS, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		return mapErr(err)
	}
	if err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, lockByte()); err != nil {
		windows.CloseHandle(h)
		return mapErr(err)
	}
	folderLocks.Lock()
	if old, ok := folderLocks.held[fd]; ok {
		windows.CloseHandle(old) // a second flock of one handle holds one lock, as on Unix
	}
	folderLocks.held[fd] = h
	folderLocks.Unlock()
	return nil
}

// unlockFolder lets go of the lock fd's folder holds, if any: its
// handle is closing.
func unlockFolder(fd int) {
	folderLocks.Lock()
	h, ok := folderLocks.held[fd]
	delete(folderLocks.held, fd)
	folderLocks.Unlock()
	if ok {
		windows.CloseHandle(h)
	}
}

// folderLockFile is the lock file in dir of the folder whose identity
// is st.
func folderLockFile(dir string, st *Stat_t) string {
	return filepath.Join(dir, fmt.Sprintf("%016x-%016x.lock", st.Dev, st.Ino))
}

// LocalAppData is the user's %LOCALAPPDATA% as the shell's known folder
// gives it (SHGetKnownFolderPath), never the variable, which a call can
// set.
func LocalAppData() (string, error) {
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, 0)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(local) {
		return "", fmt.Errorf("LocalAppData %q is not absolute", local)
	}
	return local, nil
}

// folderLockDir is %LOCALAPPDATA%\dsh-fs\locks, made where missing.
func folderLockDir() (string, error) {
	local, err := LocalAppData()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(local, "dsh-fs", "locks")
	return dir, os.MkdirAll(dir, 0o700)
}
