//go:build unix

package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/trust"
)

// supervisorGone reports whether r's supervisor has ended: no process has
// its pid, or the one that has it started at another time. Only a
// process in the supervisor's pid namespace can tell; from any other it
// reports false, and the record's place alone decides.
func (r *Record) supervisorGone() bool {
	if ns, err := PidNamespace(); err != nil || r.SupervisorPidNS == 0 || ns != r.SupervisorPidNS {
		return false
	}
	start, err := StartTime(r.Supervisor)
	if err != nil {
		return errors.Is(unix.Kill(r.Supervisor, 0), unix.ESRCH)
	}
	return start != r.SupervisorStart
}

// RuntimeBase is the one folder that holds the records of this user's
// sessions, and the only one a record is read from: /run/dsh-fs for root,
// /run/user/UID/dsh-fs for any other user (its runtime folder, as
// pam_systemd makes it); on macOS /var/run/dsh-fs and ~/Library/dsh-fs
// (runtimeFolder). It is never taken from a variable: the model sets the
// variables of every call inside a session.
func RuntimeBase() string {
	if uid := os.Geteuid(); uid != 0 {
		return filepath.Join(runtimeFolder(uid), "dsh-fs")
	}
	return rootRuntimeBase
}

// Dir makes the private folder of one session's record: a new
// session-* folder, mode 0700, in RuntimeBase. A user that is not root
// needs its runtime folder /run/user/UID, where its records are trusted:
// xdg, the caller's $XDG_RUNTIME_DIR, may be unset (after su, in a CI
// job), since the place comes from the uid alone, but one that names
// another folder is refused rather than ignored, since its owner meant
// the record to go there. A missing runtime folder is refused with what
// to do about it. The folder must lie outside every root in roots, which
// the session may write, and it and every folder above it be owned by
// root or this user and writable by no one else.
func Dir(xdg string, roots []string) (string, error) {
	base := RuntimeBase()
	if err := checkRuntimeFolder(xdg); err != nil {
		return "", err
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	unlock := lockRuntime(base)
	removeStale(base)
	unlock()
	dir, err := os.MkdirTemp(base, "session-")
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(dir)
	if err == nil && real != dir {
		err = fmt.Errorf("the runtime folder %s leads to %s: a record is trusted only in %s", dir, real, base)
	}
	if err == nil {
		err = checkPrivate(real)
	}
	if err == nil {
		for _, r := range roots {
			if sandbox.Beneath(r, real) {
				err = fmt.Errorf("the runtime folder %s lies in the writable root %s, where the session could rewrite its record", real, r)
				break
			}
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return real, nil
}

// checkRuntimeFolder checks, for a user that is not root, the runtime
// folder RuntimeBase lies in: xdg, the caller's $XDG_RUNTIME_DIR, is
// unset or names it, and it is the user's own and private
// (userRuntimeFolder). Root's, /run/dsh-fs, needs no variable.
func checkRuntimeFolder(xdg string) error {
	if os.Geteuid() == 0 {
		return nil
	}
	want := filepath.Dir(RuntimeBase())
	if xdgNamesRuntime && xdg != "" && filepath.Clean(xdg) != want {
		return fmt.Errorf("XDG_RUNTIME_DIR is %s, not %s: a session's record is trusted only in %s", xdg, want, RuntimeBase())
	}
	return userRuntimeFolder(want, os.Geteuid())
}

// userRuntimeFolder checks dir, the runtime folder /run/user/UID of the
// user uid: it exists, is a folder (not a symlink) the user owns, and no
// one else may enter it. Where it is missing, the error says how to make
// one, since a session of a user that is not root has nowhere else its
// record can be trusted.
func userRuntimeFolder(dir string, uid int) error {
	var st unix.Stat_t
	err := unix.Lstat(dir, &st)
	switch {
	case errors.Is(err, unix.ENOENT):
		return fmt.Errorf("no private runtime folder: %s does not exist (a login through pam_systemd makes it; in a container or CI job, root can: install -d -m 0700 -o %d -g %d %s)", dir, uid, os.Getegid(), dir)
	case err != nil:
		return fmt.Errorf("the runtime folder %s: %w", dir, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("the runtime folder %s is not a folder", dir)
	case int(st.Uid) != uid:
		return fmt.Errorf("the runtime folder %s belongs to uid %d, not to this user (%d)", dir, st.Uid, uid)
	case st.Mode&0o077 != 0:
		return fmt.Errorf("the runtime folder %s has mode %#o: others may enter it (chmod 0700 %s)", dir, st.Mode&0o777, dir)
	}
	return nil
}

// Write writes r as dir/session.json, read-only (0400), and returns its
// path. r must name its supervisor, by pid and pid namespace: Read
// trusts no record that does not.
func Write(dir string, r *Record) (string, error) {
	if r.Supervisor <= 0 || r.SupervisorPidNS == 0 {
		return "", errors.New("the record names no supervisor (its pid and pid namespace)")
	}
	r.Version = Version
	data, err := json.Marshal(r)
	if err != nil {
		return "", err
	}
	path := RecordPath(dir)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o400)
	if err != nil {
		return "", err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(path)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return "", err
	}
	return path, nil
}

// EmptyFile writes, in a session's folder, the empty read-only file the
// mount layer binds over hidden files, and returns its path and its
// identity: inside the session a hidden file reads as this one, which
// the file tool must refuse as the file it hides.
func EmptyFile(dir string) (string, policy.DenyIdentity, error) {
	path := filepath.Join(dir, "empty")
	if err := os.WriteFile(path, nil, 0o400); err != nil {
		return "", policy.DenyIdentity{}, err
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return "", policy.DenyIdentity{}, err
	}
	id := policy.DenyIdentity{Dev: uint64(st.Dev), Ino: uint64(st.Ino), Glob: "a deny_read file the mount layer hides"}
	return path, id, nil
}

// Read reads the record at path and returns it only when the session it
// pins could not have written it: a regular file with no write bit, owned
// by root or this user (as this user namespace shows owners), at
// session.json in a 0700 session-* folder of RuntimeBase, in folders no
// one else may write, outside every writable root it names, naming a
// supervisor still running (judged where the caller shares its pid
// namespace). Anything else is a *RefusedError.
func Read(path string) (*Record, error) {
	refuse := func(why string) error { return &RefusedError{Path: path, Why: why} }
	if !filepath.IsAbs(path) {
		return nil, refuse("not an absolute path")
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, refuse(reason(err))
	}
	defer f.Close()
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return nil, refuse(err.Error())
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, refuse(err.Error())
	}
	if why := ownedSafely(fi, false); why != "" {
		return nil, refuse(why)
	}
	dir := filepath.Dir(real)
	if err := checkPrivate(dir); err != nil {
		return nil, refuse(err.Error())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return nil, refuse(err.Error())
	}
	if len(data) > maxRecordBytes {
		return nil, refuse("larger than a record")
	}
	var r Record
	if err := json.Unmarshal(data, &r); err != nil || r.Version != Version || r.Values == nil {
		return nil, refuse("not a dsh-fs exec session record")
	}
	for _, root := range r.Roots {
		if sandbox.Beneath(root, real) {
			return nil, refuse("it lies in the writable root " + root + ", where the session could have written it")
		}
	}
	base := RuntimeBase()
	if filepath.Dir(dir) != base || !strings.HasPrefix(filepath.Base(dir), "session-") || real != RecordPath(dir) {
		return nil, refuse("it is not in a session folder of exec's runtime folder " + base + ", where only exec writes records")
	}
	if fi, err := os.Lstat(dir); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return nil, refuse("its session folder is not private (mode 0700)")
	}
	if r.Supervisor <= 0 || r.SupervisorPidNS == 0 {
		return nil, refuse("it names no supervisor")
	}
	if r.supervisorGone() {
		return nil, refuse(fmt.Sprintf("its supervisor (pid %d) is gone", r.Supervisor))
	}
	return &r, nil
}

// ownedSafely says why fi cannot be trusted, or "": it must be a regular
// file (or, with dir, a folder), owned by root or this user (as this
// user namespace shows owners), and nobody may write it (a folder:
// nobody but its owner).
func ownedSafely(fi os.FileInfo, dir bool) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "no owner to check"
	}
	switch {
	case dir && !fi.IsDir():
		return fi.Name() + " is not a folder"
	case !dir && !fi.Mode().IsRegular():
		return "not a regular file"
	case !trust.OwnerTrusted(st.Uid):
		return fmt.Sprintf("owned by uid %d, neither root nor this user", st.Uid)
	case dir && fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("the folder %s may be written by others (mode %04o)", fi.Name(), fi.Mode().Perm())
	case !dir && fi.Mode().Perm()&0o222 != 0:
		return fmt.Sprintf("it may be written (mode %04o; a record is 0400)", fi.Mode().Perm())
	}
	return ""
}
