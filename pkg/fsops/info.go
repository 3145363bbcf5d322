// Package fsops carries out dsh-fs's operations, one entry point each
// (Read, Write, Edit, List, Stat), on targets the sandbox has resolved and
// judged. Each returns a result struct with json tags, or an error carrying
// a code.
package fsops

import (
	"fmt"
	"io/fs"
	"time"
)

// File types as results name them.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return TypeFile
	case m.IsDir():
		return TypeDir
	case m&fs.ModeSymlink != 0:
		return TypeSymlink
	}
	return TypeOther
}

// permString renders a mode's permission bits as an octal string with the
// set-id and sticky bits, as chmod takes them: "0644", "4755".
func permString(m fs.FileMode) string {
	p := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		p |= 0o1000
	}
	return fmt.Sprintf("%04o", p)
}

// mtimeString renders a modification time in RFC 3339, in UTC so the same
// file gives the same bytes wherever it is listed.
func mtimeString(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
