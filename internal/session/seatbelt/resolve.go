package seatbelt

import (
	"path/filepath"
	"runtime"
	"strings"
)

// macSymlinks are the folders at the root of macOS that are symlinks
// into /private.
var macSymlinks = []string{"/tmp", "/var", "/etc"}

// ResolveAsMac is filepath.EvalSymlinks, and on an OS other than macOS
// the result spelled as macOS would resolve it (/tmp/x is
// /private/tmp/x): what policy --format sbpl shows on Linux reads as the
// profile of the same folders on a Mac.
func ResolveAsMac(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil || runtime.GOOS == "darwin" {
		return real, err
	}
	return macSpelling(real), nil
}

// macSpelling is path with a leading /tmp, /var or /etc put under
// /private.
func macSpelling(path string) string {
	for _, l := range macSymlinks {
		if path == l || strings.HasPrefix(path, l+"/") {
			return "/private" + path
		}
	}
	return path
}
