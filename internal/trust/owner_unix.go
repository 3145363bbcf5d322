//go:build unix

package trust

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Trusted files (the config files of docs/design.md §2, a session's
// record of §10) are believed only where nobody but root and the caller
// could have written them. Ownership is judged as the kernel shows it in
// the caller's user namespace: inside a dsh-fs exec session of an
// ordinary user, a namespace that maps that user alone, every file root
// owns shows as the overflow uid.

// OwnerTrusted reports whether a file whose owner stat shows as uid is
// owned by root or by this process's effective user. It never trusts
// another user's uid.
func OwnerTrusted(uid uint32) bool {
	return uid == 0 || int64(uid) == int64(os.Geteuid()) || OwnerIsRoot(uid)
}

// OwnerIsRoot reports whether an owner that stat shows as uid stands for
// root: uid 0, or, only in a user namespace that does not map root, the
// overflow uid (/proc/sys/kernel/overflowuid), which the kernel shows for
// every owner it cannot map. There the overflow uid stands for any
// unmapped owner, not for root alone: whoever judges a file by it relies
// on the same file having been judged outside the namespace, where owners
// are real (exec loads its policy before it starts the session), and on
// the session being unable to change owners (it has no capability over
// an unmapped uid).
func OwnerIsRoot(uid uint32) bool {
	if uid == 0 {
		return true
	}
	m := idMap()
	return m.known && !m.rootMapped && uid == m.overflow
}

// idMapping is what this process's user namespace maps.
type idMapping struct {
	known      bool // both files were read
	rootMapped bool
	overflow   uint32
}

// idMap is read once per process, and only when an owner is neither 0 nor
// this user: a call outside any user namespace never reads it.
var idMap = sync.OnceValue(func() idMapping {
	maps, err1 := os.ReadFile("/proc/self/uid_map")
	over, err2 := os.ReadFile("/proc/sys/kernel/overflowuid")
	if err1 != nil || err2 != nil {
		// Without them the overflow uid is nobody's: refusing a file
		// is safe, trusting one for root is not.
		return idMapping{}
	}
	return parseIDMapping(maps, over)
})

// parseIDMapping reads a uid_map (lines "first-inside first-outside
// count") and the overflow uid. Anything it cannot read leaves the
// mapping unknown.
func parseIDMapping(uidMap, overflow []byte) idMapping {
	o, err := strconv.ParseUint(strings.TrimSpace(string(overflow)), 10, 32)
	if err != nil {
		return idMapping{}
	}
	m := idMapping{known: true, overflow: uint32(o)}
	for _, line := range bytes.Split(uidMap, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) == 0 {
			continue
		}
		if len(f) != 3 {
			return idMapping{}
		}
		first, err1 := strconv.ParseUint(f[0], 10, 32)
		count, err2 := strconv.ParseUint(f[2], 10, 32)
		if err1 != nil || err2 != nil {
			return idMapping{}
		}
		if first == 0 && count > 0 {
			m.rootMapped = true
		}
	}
	return m
}

// CheckTrustedFile checks a trusted file that was opened as fi: a
// regular file owned by root or this user that neither its group nor
// others may write.
func CheckTrustedFile(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return &UnsafeError{path, "no owner to check"}
	case !fi.Mode().IsRegular():
		return &UnsafeError{path, "not a regular file"}
	case !OwnerTrusted(st.Uid):
		return &UnsafeError{path, fmt.Sprintf("owned by uid %d, neither root nor this user", st.Uid)}
	case fi.Mode().Perm()&0o022 != 0:
		return &UnsafeError{path, fmt.Sprintf("others may write it (mode %04o)", fi.Mode().Perm())}
	}
	return nil
}

// CheckTrustedOpened is CheckTrustedFile for the file f, opened from
// path: it is judged as opened, never by its name.
func CheckTrustedOpened(path string, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return &UnsafeError{path, err.Error()}
	}
	return CheckTrustedFile(path, fi)
}

// SamePath reports whether two real paths name the same place: on Unix
// when they are equal.
func SamePath(a, b string) bool { return a == b }

// CheckTrustedPath checks every folder a lookup of path passes and every
// symlink it follows, one lstat per component, and returns the real path.
// Each must be owned by root or this user, and no folder writable by its
// group or others, who could put a file in place of a trusted one; with
// sticky, a sticky folder (/tmp) may be, since only an entry's owner may
// rename it there. A symlink is judged by its owner. The object path
// names is not judged: the caller judges what it opened and compares its
// real path with the one returned.
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
	fi, err := os.Lstat("/")
	if err == nil {
		err = judgeFolder("/", fi, sticky)
	} else {
		err = &UnsafeError{"/", err.Error()}
	}
	if err != nil {
		return "", err
	}
	done, links := "/", 0
	rest := strings.Split(path, "/")
	for len(rest) > 0 {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			// done holds no symlink: its parent is its lexical one.
			done = filepath.Dir(done)
			continue
		}
		p := filepath.Join(done, name)
		fi, err := os.Lstat(p)
		if err != nil {
			return "", &UnsafeError{p, err.Error()}
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if err := judgeOwner(p, fi); err != nil {
				return "", err
			}
			if links++; links > maxTrustedLinks {
				return "", &UnsafeError{path, "too many symlinks"}
			}
			target, err := os.Readlink(p)
			if err != nil {
				return "", &UnsafeError{p, err.Error()}
			}
			if filepath.IsAbs(target) {
				done = "/"
			}
			rest = append(strings.Split(target, "/"), rest...)
			continue
		}
		if !lastComponent(rest) || judgeLast {
			if err := judgeFolder(p, fi, sticky); err != nil {
				return "", err
			}
		}
		done = p
	}
	return done, nil
}

func judgeOwner(p string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &UnsafeError{p, "no owner to check"}
	}
	if !OwnerTrusted(st.Uid) {
		return &UnsafeError{p, fmt.Sprintf("owned by uid %d, neither root nor this user", st.Uid)}
	}
	return nil
}

func judgeFolder(p string, fi os.FileInfo, sticky bool) error {
	if err := judgeOwner(p, fi); err != nil {
		return err
	}
	switch {
	case !fi.IsDir():
		return &UnsafeError{p, "not a folder"}
	case fi.Mode().Perm()&0o022 != 0 && !(sticky && fi.Mode()&os.ModeSticky != 0):
		return &UnsafeError{p, fmt.Sprintf("the folder may be written by others (mode %04o)", ModeBits(fi.Mode()))}
	}
	return nil
}
