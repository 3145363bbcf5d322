package audit

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/windows"

	"github.com/dshfs/dsh-fs/internal/trust"
)

// trustHint says how the audit log is made trusted here.
const trustHint = "the audit log and the folders above it may be written by administrators and its owner only " +
	"(icacls FILE /inheritance:r /grant:r *S-1-5-18:F *S-1-5-32-544:F %USERNAME%:F)"

// openAppend opens the log for one append, never through a reparse
// point (a symlink or junction), and refuses it where it has more than
// one link (a second name could lie where others write): a
// *trust.UnsafeError.
func openAppend(path string) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(name, windows.FILE_APPEND_DATA|windows.FILE_READ_DATA|windows.READ_CONTROL|windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE, nil, windows.OPEN_ALWAYS,
		windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		f.Close()
		return nil, err
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		err = &trust.UnsafeError{Path: path, Why: "a symlink or junction (a reparse point)"}
	case info.NumberOfLinks != 1:
		err = &trust.UnsafeError{Path: path, Why: "it has more than one link"}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// flock takes an exclusive lock of f (LockFileEx), waiting at most
// lockWait.
func flock(f *os.File) error {
	deadline := time.Now().Add(lockWait)
	for {
		ol := new(windows.Overlapped)
		err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
		if err != windows.ERROR_LOCK_VIOLATION {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("locked by another process for more than %s", lockWait)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// closeOnExec does nothing on Windows: a handle passes to a child only
// where the parent asks for it.
func closeOnExec(int) {}
