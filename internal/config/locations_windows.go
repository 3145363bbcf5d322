package config

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/windows"

	"github.com/dshfs/dsh-fs/internal/trust"
)

// DefaultLocations are the trusted locations of this build on Windows:
// the machine's config in %ProgramData%\dsh-fs, the user's in
// %APPDATA%\dsh-fs, both from the shell's known folders
// (SHGetKnownFolderPath), never from the variables, which a call can
// set. A -X systemDir other than the Unix one moves the machine's.
func DefaultLocations() Locations {
	dir := systemDir
	if dir == "/etc/dsh-fs" {
		dir = `C:\ProgramData\dsh-fs`
		if pd, err := windows.KnownFolderPath(windows.FOLDERID_ProgramData, 0); err == nil && filepath.IsAbs(pd) {
			dir = filepath.Join(pd, "dsh-fs")
		}
	}
	return Locations{SystemDir: dir, Home: userDatabaseHome, UserDir: func() (string, error) {
		ad, err := windows.KnownFolderPath(windows.FOLDERID_RoamingAppData, 0)
		if err != nil {
			return "", err
		}
		return filepath.Join(ad, "dsh-fs"), nil
	}}
}

// openConfigFlags open a config file for reading.
const openConfigFlags = os.O_RDONLY

// openedPath is the real path of the opened file f
// (GetFinalPathNameByHandle).
func openedPath(f *os.File) (string, error) { return trust.OpenedPath(f) }

// trustHint says how a trusted file is made trusted here.
const trustHint = `a trusted file and the folders above it may be written by administrators and its owner only ` +
	`(icacls FILE /inheritance:r /grant:r *S-1-5-18:F *S-1-5-32-544:F %USERNAME%:F)`
