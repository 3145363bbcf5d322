//go:build unix

package gitguard

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"golang.org/x/sys/unix"
)

// A git directory's code-running parts, as read through a descriptor of
// the folder: what git would run for the person, by file.

// maxConfigBytes bounds a config file the guard reads; a larger one is a
// part of its own, by size, and is quarantined whole if it is new.
const maxConfigBytes = 4 << 20

// maxHooks bounds the entries of hooks/ the guard looks at one by one;
// past it, hooks/ is one part, moved whole if it changed.
const maxHooks = 1000

// maxIncludeDepth is git's own bound on nested includes.
const maxIncludeDepth = 10

// part is one code-running part of a git directory.
type part struct {
	// id says what the part is, in full: two parts with one id run the
	// same code. It names its file, its key and value, or a hook's name
	// and content.
	id string
	// file is the entry of the git directory the part lives in or
	// comes through: "config", "config.worktree", "hooks" or
	// "hooks/NAME".
	file string
	// what names the part in the report: "core.fsmonitor",
	// "include.path -> x.inc: core.pager", "hooks/pre-commit".
	what string
	// entry is, for a part in (or included from) a config file that was
	// parsed, the entry of that file to cut; nil means the whole file.
	entry *Entry
	// changed is the latest status change (ctime) of the files the part
	// is read from.
	changed time.Time
}

// repo is what the guard read of one git directory.
type repo struct {
	dev, ino uint64
	uid, gid uint32
	parts    []part
}

func ctimeOf(st *unix.Stat_t) time.Time { return time.Unix(st.Ctim.Sec, st.Ctim.Nsec) }

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// openGitDir opens the canonical path of a git directory as a folder,
// refusing a symlink anywhere on the way: one there was put since the
// walk, and would lead the guard out of the git directory.
func openGitDir(path string) (int, error) {
	return kernel.OpenNoSymlinks(path, unix.O_RDONLY|unix.O_DIRECTORY)
}

// readRepo reads the code-running parts of the git directory open as gfd:
// its config and config.worktree (with what they include) and hooks/.
func readRepo(gfd int, home string) (*repo, error) {
	var st unix.Stat_t
	if err := unix.Fstat(gfd, &st); err != nil {
		return nil, err
	}
	r := &repo{dev: uint64(st.Dev), ino: st.Ino, uid: st.Uid, gid: st.Gid}
	for _, name := range []string{"config", "config.worktree"} {
		r.parts = append(r.parts, configParts(gfd, name, home)...)
	}
	r.parts = append(r.parts, hookParts(gfd)...)
	return r, nil
}

// readAt reads the small regular file name in the folder dirfd, never
// following a symlink unless follow, and never opening anything else
// (openRegular). A file that is not there reads as nothing (ok false, err
// nil).
func readAt(dirfd int, name string, follow bool) (data []byte, st unix.Stat_t, ok bool, err error) {
	fd, st, err := openRegular(dirfd, name, follow)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return nil, st, false, nil
	}
	if err != nil {
		return nil, st, false, err
	}
	if st.Size > maxConfigBytes {
		unix.Close(fd)
		return nil, st, false, errors.New("too large")
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	data = make([]byte, 0, st.Size)
	for len(data) < cap(data) {
		n, rerr := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if rerr != nil {
			break
		}
	}
	return data, st, true, nil
}

// configParts are the code-running parts of the config file name in the
// git directory gfd. A config git would read that the guard cannot
// (a symlink, a fifo, too large, or text it does not parse) is one part,
// the whole file, by what it is.
func configParts(gfd int, name, home string) []part {
	var lst unix.Stat_t
	if err := unix.Fstatat(gfd, name, &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil
	}
	whole := func(what string) []part {
		return []part{{id: name + "\x00whole\x00" + what, file: name, what: name + " (" + strings.SplitN(what, ":", 2)[0] + ")", changed: ctimeOf(&lst)}}
	}
	if lst.Mode&unix.S_IFMT != unix.S_IFREG {
		// git follows a symlinked config; the guard does not write
		// through one, and takes the link and what it reads as one part.
		target := make([]byte, 4096)
		n, _ := unix.Readlinkat(gfd, name, target)
		data, _, _, _ := readAt(gfd, name, true)
		return whole("not a regular file:" + string(target[:max(n, 0)]) + "\x00" + digest(data))
	}
	data, st, ok, err := readAt(gfd, name, false)
	if err != nil || !ok {
		return whole("unreadable:" + digest(data))
	}
	entries, err := ParseConfig(data)
	if err != nil {
		return whole("unparsed:" + digest(data))
	}
	var parts []part
	for i := range entries {
		e := &entries[i]
		if !RunsCode(*e) {
			continue
		}
		id := name + "\x00" + e.Key() + "\x00" + e.Value
		parts = append(parts, part{id: id, file: name, what: e.Key(), entry: e, changed: ctimeOf(&st)})
		if inc, ok := includes(*e); ok {
			// A relative include is taken from the git directory, by fd.
			parts = append(parts, includedParts(gfd, name, "", inc, home, e, id, ctimeOf(&st), 1)...)
		}
	}
	return parts
}

// includedParts are the code-running parts that the include of path (from
// a file in the folder dir, "" for the git directory gfd) brings in,
// through the entry top of the git directory's own config. The included
// file is only read, never written: to neutralize what it brings, the
// guard cuts top.
func includedParts(gfd int, topFile, dir, path, home string, top *Entry, via string, changed time.Time, depth int) []part {
	if depth > maxIncludeDepth {
		return nil
	}
	switch {
	case strings.HasPrefix(path, "~/"):
		if home == "" {
			return nil
		}
		path = filepath.Join(home, path[2:])
	case strings.HasPrefix(path, "%(prefix)/"):
		return nil // git's install prefix: not the session's to write
	}
	dirfd := gfd
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	if filepath.IsAbs(path) {
		dirfd = unix.AT_FDCWD
	}
	data, st, ok, err := readAt(dirfd, path, true)
	if !ok && err == nil {
		return nil // git skips a missing include
	}
	via += "\x00" + path
	if changed.Before(ctimeOf(&st)) {
		changed = ctimeOf(&st)
	}
	entries, perr := ParseConfig(data)
	if err != nil || perr != nil {
		return []part{{id: via + "\x00unreadable\x00" + digest(data), file: topFile, what: top.Key() + " -> " + path, entry: top, changed: changed}}
	}
	next := filepath.Dir(path)
	var parts []part
	for i := range entries {
		e := entries[i]
		if !RunsCode(e) {
			continue
		}
		id := via + "\x00" + e.Key() + "\x00" + e.Value
		parts = append(parts, part{id: id, file: topFile, what: top.Key() + " -> " + path + ": " + e.Key(), entry: top, changed: changed})
		if inc, ok := includes(e); ok {
			parts = append(parts, includedParts(gfd, topFile, next, inc, home, top, id, changed, depth+1)...)
		}
	}
	return parts
}

// hookParts are the hooks git would run from hooks/: every entry but
// the *.sample files git init writes, by name and content. A hooks/ that
// is not a folder (a symlink git would follow) is one part.
func hookParts(gfd int) []part {
	var lst unix.Stat_t
	if err := unix.Fstatat(gfd, "hooks", &lst, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil
	}
	if lst.Mode&unix.S_IFMT != unix.S_IFDIR {
		target := make([]byte, 4096)
		n, _ := unix.Readlinkat(gfd, "hooks", target)
		return []part{{id: "hooks\x00" + string(target[:max(n, 0)]), file: "hooks", what: "hooks (not a folder)", changed: ctimeOf(&lst)}}
	}
	hfd, err := unix.Openat(gfd, "hooks", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return []part{{id: "hooks\x00unreadable", file: "hooks", what: "hooks (unreadable)", changed: ctimeOf(&lst)}}
	}
	f := os.NewFile(uintptr(hfd), "hooks")
	defer f.Close()
	names, _ := f.Readdirnames(maxHooks + 1)
	if len(names) > maxHooks {
		// One part for the folder, by when its listing last changed.
		return []part{{id: "hooks\x00many\x00" + ctimeOf(&lst).String(), file: "hooks", what: "hooks (too many entries)", changed: ctimeOf(&lst)}}
	}
	var parts []part
	for _, name := range names {
		if strings.HasSuffix(name, ".sample") {
			continue
		}
		var st unix.Stat_t
		if unix.Fstatat(hfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		content := ""
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			data, _, _, err := readAt(hfd, name, false)
			content = "file\x00" + digest(data)
			if err != nil {
				// Too large to hash here: any write changes its ctime.
				content = fmt.Sprintf("file\x00%d\x00%d\x00%s", st.Ino, st.Size, ctimeOf(&st))
			}
		case unix.S_IFLNK:
			target := make([]byte, 4096)
			n, _ := unix.Readlinkat(hfd, name, target)
			content = "symlink\x00" + string(target[:max(n, 0)])
		default:
			content = fmt.Sprintf("type\x00%o", st.Mode&unix.S_IFMT)
		}
		content += fmt.Sprintf("\x00%o", st.Mode&0o7777)
		// A hook is as new as its folder: hooks/ moved into place (or
		// given a new entry) changes the folder's ctime, not the hooks'.
		changed := ctimeOf(&st)
		if changed.Before(ctimeOf(&lst)) {
			changed = ctimeOf(&lst)
		}
		parts = append(parts, part{id: "hooks/" + name + "\x00" + content, file: "hooks/" + name, what: "hooks/" + name, changed: changed})
	}
	return parts
}
