// Package fsops carries out dsh-fs's operations, one entry point each
// (Read, Write, Edit, List, Stat), on targets the sandbox has resolved and
// judged. Each returns a result struct with json tags, or an error carrying
// a code.
package fsops

import (
	"fmt"
	"io/fs"
	"time"

	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/trust"
)

// File types as results name them.
const (
	TypeFile    = "file"
	TypeDir     = "dir"
	TypeSymlink = "symlink"
	TypeOther   = "other"
)

// Info is what ls and stat say of one file system entry, without
// following it when it is a symlink.
type Info struct {
	Type  string `json:"type,omitempty"`
	Size  int64  `json:"size"`
	Perm  string `json:"perm,omitempty"`
	Mtime string `json:"mtime,omitempty"`
	// Target is what a symlink points to, as stored in the link.
	Target string `json:"target,omitempty"`
}

// describe fills an Info from what the fence saw of an entry.
func describe(st *sandbox.Stat) Info {
	m := fileMode(uint32(st.Mode))
	mtime := time.Unix(int64(st.Mtim.Sec), int64(st.Mtim.Nsec))
	return Info{Type: typeOf(m), Size: st.Size, Perm: permString(m), Mtime: MtimeString(mtime), Target: st.Target}
}

// fileMode turns a stat mode into an fs.FileMode, as os.Lstat does.
func fileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	switch mode & fsys.S_IFMT {
	case fsys.S_IFDIR:
		m |= fs.ModeDir
	case fsys.S_IFLNK:
		m |= fs.ModeSymlink
	case fsys.S_IFIFO:
		m |= fs.ModeNamedPipe
	case fsys.S_IFSOCK:
		m |= fs.ModeSocket
	case fsys.S_IFBLK:
		m |= fs.ModeDevice
	case fsys.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	}
	if mode&fsys.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&fsys.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&fsys.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// TypeOf is the result's name of a stat mode's file type: TypeFile,
// TypeDir, TypeSymlink or TypeOther.
func TypeOf(mode uint32) string { return typeOf(fileMode(mode)) }

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
	return fmt.Sprintf("%04o", trust.ModeBits(m))
}

// MtimeString renders a modification time in RFC 3339, in UTC so the same
// file gives the same bytes wherever it is listed.
func MtimeString(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
