package trust

import "os"

// UnsafeError says who else could have written a trusted file: Path is
// the file, or the folder above it, that is at fault.
type UnsafeError struct {
	Path string
	Why  string
}

func (e *UnsafeError) Error() string { return e.Path + ": " + e.Why }

// maxTrustedLinks bounds the symlinks one path may lead through, as the
// kernel's own lookup does (40).
const maxTrustedLinks = 40

// lastComponent reports whether rest, what remains of a path, names
// nothing more.
func lastComponent(rest []string) bool {
	for _, r := range rest {
		if r != "" && r != "." {
			return false
		}
	}
	return true
}

// ModeBits is a mode's permission bits with the set-id and sticky bits,
// as chmod takes them (0o4755).
func ModeBits(m os.FileMode) uint32 {
	b := uint32(m.Perm())
	if m&os.ModeSticky != 0 {
		b |= 0o1000
	}
	if m&os.ModeSetgid != 0 {
		b |= 0o2000
	}
	if m&os.ModeSetuid != 0 {
		b |= 0o4000
	}
	return b
}
