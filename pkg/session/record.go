// Package session pins the policy of a dsh-fs exec session: the record
// that exec writes where the session cannot, and the checks that a
// record named by DSH_FS_SESSION is one (docs/design.md §10).
package session

import (
	"bytes"
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

	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// Env names the session record inside a dsh-fs exec session. The model
// can point it anywhere, so Read trusts only a record it could not have
// written.
const Env = "DSH_FS_SESSION"

// Version is the record format this build writes and reads.
const Version = 1

// maxRecordBytes bounds a record: a session could name a huge file.
const maxRecordBytes = 1 << 20

// Record is the resolved policy of a session, as dsh-fs exec pinned it.
type Record struct {
	Version int `json:"version"`
	// Values are the effective settings exec resolved, by key: every
	// call inside takes them as its trusted base.
	Values map[string]any `json:"values"`
	// Roots are the canonical writable roots the kernel layer of the
	// session leaves writable (none in read-only mode).
	Roots []string `json:"roots"`
	// Shell is what holds for the session's shell.
	Shell Shell `json:"shell"`
	// Supervisor is the process id of the exec supervisor, and
	// SupervisorStart its start time (StartTime): the pid alone may come
	// to name another process once the supervisor is gone.
	Supervisor      int    `json:"supervisor_pid"`
	SupervisorStart uint64 `json:"supervisor_start"`
}

// StartTime is when the process pid started, in clock ticks since boot
// (field 22 of /proc/PID/stat). With the pid it names one process: a pid
// is reused, a pid and its start time are not.
func StartTime(pid int) (uint64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces
	// and parentheses itself: the fields that follow come after the last.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(string(data[i+1:]))
	// fields[0] is field 3 (the state), so field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// supervisorGone reports whether r's supervisor has ended: no process has
// its pid, or the one that has it started at another time.
func (r *Record) supervisorGone() bool {
	start, err := StartTime(r.Supervisor)
	if err != nil {
		return errors.Is(unix.Kill(r.Supervisor, 0), unix.ESRCH)
	}
	return start != r.SupervisorStart
}

// Shell says which layers fence the shell of a session.
type Shell struct {
	// Landlock is the Landlock ABI of the restriction on the whole
	// process tree; 0 when there is none.
	Landlock int `json:"landlock_abi"`
	// Kernel says, when Landlock is 0, why the tree is not restricted.
	Kernel string `json:"kernel,omitempty"`
	// Mounts is the mount layer: protected paths bound read-only and
	// deny_read paths hidden; nil when there is none, and MountsWhy
	// then says why.
	Mounts    *sandbox.MountPlan `json:"mounts"`
	MountsWhy string             `json:"mounts_unavailable,omitempty"`
	// Broker says an escalation channel to the supervisor was handed to
	// the shell.
	Broker bool `json:"broker"`
	// GitHeld says the supervisor neutralizes, when the session ends, the
	// code-running git parts it planted (pkg/gitguard); Git says what
	// holds, or why nothing does.
	GitHeld bool   `json:"git_held"`
	Git     string `json:"git"`
}

// Dir makes the private folder of one session's record: under
// /run/dsh-fs when running as root, else under $XDG_RUNTIME_DIR (xdg),
// a folder only its owner may enter. It must lie outside every root in
// roots, which the session may write.
func Dir(xdg string, roots []string) (string, error) {
	base := "/run/dsh-fs"
	if os.Geteuid() != 0 {
		if xdg == "" || !filepath.IsAbs(xdg) {
			return "", errors.New("no private runtime folder: XDG_RUNTIME_DIR is not set (or run as root, which uses /run/dsh-fs)")
		}
		base = filepath.Join(xdg, "dsh-fs")
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", err
	}
	removeStale(base)
	dir, err := os.MkdirTemp(base, "session-")
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(dir)
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

// removeStale removes the folders of sessions whose supervisor is gone: a
// supervisor killed with SIGKILL could not remove its own, and a record
// left behind could be named by a later session.
func removeStale(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "session-*"))
	for _, d := range dirs {
		data, err := os.ReadFile(filepath.Join(d, "session.json"))
		if err != nil {
			continue // being written, or not a session's
		}
		var r Record
		if json.Unmarshal(data, &r) != nil || r.Supervisor <= 0 {
			continue
		}
		if r.supervisorGone() {
			os.RemoveAll(d)
		}
	}
}

// RecordPath is where Write puts the record of the session folder dir.
func RecordPath(dir string) string { return filepath.Join(dir, "session.json") }

// Write writes r as dir/session.json, read-only (0400), and returns its
// path.
func Write(dir string, r *Record) (string, error) {
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
// mount layer binds over hidden files, and returns its path.
func EmptyFile(dir string) (string, error) {
	path := filepath.Join(dir, "empty")
	return path, os.WriteFile(path, nil, 0o400)
}

// Remove removes a session's folder, its record with it: a record left
// behind could be named by a later session.
func Remove(dir string) error { return os.RemoveAll(dir) }

// RefusedError says why a record named by DSH_FS_SESSION was not trusted.
type RefusedError struct {
	Path string
	Why  string
}

func (e *RefusedError) Error() string { return "session record " + e.Path + ": " + e.Why }

// Read reads the record at path and returns it only when the session it
// pins could not have written it: a regular file with no write bit, owned
// by root or this user, in folders no one else may write, whose real
// path lies outside every writable root the record names (the roots of
// its policy and of its kernel layer). Anything else is a *RefusedError.
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
	if err := checkPrivate(filepath.Dir(real)); err != nil {
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
	return &r, nil
}

// ownedSafely says why fi cannot be trusted, or "": it must be a regular
// file (or, with dir, a folder), owned by root or this user, and nobody
// may write it (a folder: nobody but its owner).
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
	case st.Uid != 0 && int(st.Uid) != os.Geteuid():
		return fmt.Sprintf("owned by uid %d, neither root nor this user", st.Uid)
	case dir && fi.Mode().Perm()&0o022 != 0:
		return fmt.Sprintf("the folder %s may be written by others (mode %04o)", fi.Name(), fi.Mode().Perm())
	case !dir && fi.Mode().Perm()&0o222 != 0:
		return fmt.Sprintf("it may be written (mode %04o; a record is 0400)", fi.Mode().Perm())
	}
	return ""
}

// checkPrivate checks that dir and every folder above it are owned by
// root or this user and writable by no one else: otherwise someone else
// could have swapped the record.
func checkPrivate(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Lstat(d)
		if err != nil {
			return err
		}
		if why := ownedSafely(fi, true); why != "" {
			return errors.New(why)
		}
		if d == "/" {
			return nil
		}
	}
}

func reason(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file"
	case errors.Is(err, syscall.ELOOP):
		return "a symlink"
	}
	return err.Error()
}
