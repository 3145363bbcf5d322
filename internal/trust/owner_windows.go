package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// On Windows a trusted file is judged by its owner and access list
// (JudgeSecurity), read from the handle that was opened
// (GetSecurityInfo), never by name; the folders above it are opened one
// by one, without following a reparse point, and judged the same way.

// OwnerTrusted reports false: Windows has no uids, and a file judged by
// uid (a session's record, which Windows never has) is never trusted.
func OwnerTrusted(uint32) bool { return false }

// OwnerIsRoot reports false: Windows has no uids.
func OwnerIsRoot(uint32) bool { return false }

// selfSID is this process's user as a string SID, "" when the token
// cannot be read (then only the administrators are trusted).
var selfSID = sync.OnceValue(func() string {
	tok, err := windows.OpenCurrentProcessToken()
	if err != nil {
		return ""
	}
	defer tok.Close()
	u, err := tok.GetTokenUser()
	if err != nil {
		return ""
	}
	return u.User.Sid.String()
})

// CheckTrustedOpened checks a trusted file that was opened as f from
// path: a regular file, no reparse point, owned by an administrator or
// this user, that nobody else may write (JudgeSecurity).
func CheckTrustedOpened(path string, f *os.File) error {
	h := windows.Handle(f.Fd())
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return &UnsafeError{path, err.Error()}
	}
	if info.FileAttributes&(windows.FILE_ATTRIBUTE_DIRECTORY|windows.FILE_ATTRIBUTE_REPARSE_POINT|windows.FILE_ATTRIBUTE_DEVICE) != 0 {
		return &UnsafeError{path, "not a regular file"}
	}
	return judgeHandle(path, h, false, false)
}

func judgeHandle(path string, h windows.Handle, folder, addOnly bool) error {
	s, err := readSecurity(h)
	if err != nil {
		return &UnsafeError{path, "its access list cannot be read: " + err.Error()}
	}
	if why := JudgeSecurity(s, selfSID(), folder, addOnly); why != "" {
		return &UnsafeError{path, why}
	}
	return nil
}

// readSecurity reads the owner and access list of what h has open.
func readSecurity(h windows.Handle) (Security, error) {
	sd, err := windows.GetSecurityInfo(h, windows.SE_FILE_OBJECT, windows.OWNER_SECURITY_INFORMATION|windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return Security{}, err
	}
	var s Security
	if o, _, err := sd.Owner(); err == nil && o != nil {
		s.Owner = o.String()
	}
	dacl, _, err := sd.DACL()
	if errors.Is(err, windows.ERROR_OBJECT_NOT_FOUND) || err == nil && dacl == nil {
		s.NullDACL = true
		return s, nil
	}
	if err != nil {
		return s, err
	}
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return s, err
		}
		a := ACE{Type: ace.Header.AceType, Flags: ace.Header.AceFlags, Mask: uint32(ace.Mask)}
		switch a.Type {
		case aceAllowed, aceDenied, aceAllowedCallback, aceDeniedCallback:
			// These hold the SID where ACCESS_ALLOWED_ACE does; the
			// object kinds hold GUIDs first.
			a.SID = (*windows.SID)(unsafe.Pointer(&ace.SidStart)).String()
		}
		s.DACL = append(s.DACL, a)
	}
	return s, nil
}

// CheckTrustedPath checks every folder on the way to path, from the
// volume's root: none is a reparse point (a symlink, junction or mount
// point, which are never followed), and each is owned by an
// administrator or this user and may be written by nobody else; with
// sticky, a folder where others may only add entries (C:\ProgramData)
// is no fault. It returns the real path (SamePath compares it with the
// path of what was opened). The object path names is not judged.
func CheckTrustedPath(path string, sticky bool) (string, error) {
	return walkTrusted(path, sticky, false)
}

// CheckTrustedFolders is CheckTrustedPath for a folder, which is judged
// as a folder too.
func CheckTrustedFolders(dir string, sticky bool) error {
	_, err := walkTrusted(dir, sticky, true)
	return err
}

func walkTrusted(path string, sticky, judgeLast bool) (string, error) {
	if !filepath.IsAbs(path) {
		return "", &UnsafeError{path, "not an absolute path"}
	}
	path = filepath.Clean(path)
	vol := filepath.VolumeName(path)
	done := vol + `\`
	real, err := judgeFolderAt(done, sticky)
	if err != nil {
		return "", err
	}
	var rest []string
	for _, name := range strings.Split(path[len(vol):], `\`) {
		if name != "" {
			rest = append(rest, name)
		}
	}
	for i, name := range rest {
		p := filepath.Join(done, name)
		if i == len(rest)-1 && !judgeLast {
			return filepath.Join(real, name), nil
		}
		if real, err = judgeFolderAt(p, sticky); err != nil {
			return "", err
		}
		done = p
	}
	return real, nil
}

// judgeFolderAt opens the folder p without following a reparse point,
// judges it, and returns its real path.
func judgeFolderAt(p string, addOnly bool) (string, error) {
	name, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return "", &UnsafeError{p, err.Error()}
	}
	h, err := windows.CreateFile(name, windows.READ_CONTROL|windows.FILE_READ_ATTRIBUTES,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil,
		windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return "", &UnsafeError{p, err.Error()}
	}
	defer windows.CloseHandle(h)
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return "", &UnsafeError{p, err.Error()}
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		return "", &UnsafeError{p, "a symlink or junction (a reparse point), which a trusted path never passes; name the folder it leads to"}
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY == 0:
		return "", &UnsafeError{p, "not a folder"}
	}
	if err := judgeHandle(p, h, true, addOnly); err != nil {
		return "", err
	}
	return finalPath(h, p), nil
}

// volumeNameDOS asks GetFinalPathNameByHandle for a drive-letter path
// (VOLUME_NAME_DOS | FILE_NAME_NORMALIZED, both 0).
const volumeNameDOS = 0

// finalPath is the path of what h has open as the volume names it, long
// names in place of 8.3 ones; p when it cannot be read.
func finalPath(h windows.Handle, p string) string {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), volumeNameDOS)
	if err != nil || int(n) >= len(buf) {
		return p
	}
	return plainPath(windows.UTF16ToString(buf[:n]))
}

// OpenedPath is the real path of an opened file (GetFinalPathNameByHandle).
func OpenedPath(f *os.File) (string, error) {
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetFinalPathNameByHandle(windows.Handle(f.Fd()), &buf[0], uint32(len(buf)), volumeNameDOS)
	if err != nil {
		return "", err
	}
	if int(n) >= len(buf) {
		return "", windows.ERROR_INSUFFICIENT_BUFFER
	}
	return plainPath(windows.UTF16ToString(buf[:n])), nil
}

// plainPath drops the \\?\ prefix GetFinalPathNameByHandle puts before
// a path: \\?\C:\x is C:\x, \\?\UNC\server\share is \\server\share.
func plainPath(p string) string {
	if strings.HasPrefix(p, `\\?\UNC\`) {
		return `\\` + p[len(`\\?\UNC\`):]
	}
	return strings.TrimPrefix(p, `\\?\`)
}

// SamePath reports whether two real paths name the same place: Windows
// compares names without case.
func SamePath(a, b string) bool { return strings.EqualFold(plainPath(a), plainPath(b)) }
