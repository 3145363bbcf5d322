// Package session pins the policy of a dsh-fs exec session: the record
// that exec writes where the session cannot, and the checks that a
// record named by DSH_FS_SESSION is one (docs/design.md §10).
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
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/trust"
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
	// SupervisorPidNS is the supervisor's pid namespace (the inode of
	// its /proc/self/ns/pid): its pid and start time name it only to a
	// process in that namespace. A session's shell may have a pid
	// namespace of its own, where the supervisor cannot be seen.
	SupervisorPidNS uint64 `json:"supervisor_pidns"`
	// DenyIdentities are the identities of the deny_read files with
	// several links that the supervisor saw before the mount layer hid
	// them, and of the empty file it binds over hidden files: every call
	// inside refuses a file that has one (policy.Policy.DenyIdentities),
	// since inside, the hidden originals are not there to compare with.
	DenyIdentities []policy.DenyIdentity `json:"deny_identities,omitempty"`
	// ConfigFiles are the config files exec loaded, the file of exec
	// --config among them: every call inside protects them, as it
	// protects the trusted files at their fixed places, since a later
	// session reads them.
	ConfigFiles []string `json:"config_files,omitempty"`
}

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

// Shell says which layers fence the shell of a session.
type Shell struct {
	// Landlock is the Landlock ABI of the restriction on the whole
	// process tree; 0 when there is none.
	Landlock int `json:"landlock_abi"`
	// Kernel says, when Landlock is 0, why the tree is not restricted.
	Kernel string `json:"kernel,omitempty"`
	// Sandbox, when not "", is the OS's own sandbox the whole tree runs
	// under instead of Landlock and the mount layer: SandboxSeatbelt on
	// macOS, whose profile holds the writes, protected and deny_read
	// paths, sockets and network of the session's plan.
	Sandbox string `json:"sandbox,omitempty"`
	// Mounts is the mount layer: protected paths bound read-only and
	// deny_read paths hidden; nil when there is none, and MountsWhy
	// then says why.
	Mounts    *layout.MountPlan `json:"mounts"`
	MountsWhy string            `json:"mounts_unavailable,omitempty"`
	// Plan is what the session's child was told to apply (plan.Plan),
	// but CMD (its program, arguments and environment) and the file view,
	// which is Mounts' plan.Files: AppliedPlan joins them. nil in a record
	// of a session that has no child of its own (nested).
	Plan *plan.Plan `json:"plan,omitempty"`
	// OutsideReadOnlyHeld says everything outside the writable roots is
	// read-only for the shell, metadata included, the roots nodev and
	// nosuid; OutsideReadOnly says what holds, or why not.
	OutsideReadOnlyHeld bool   `json:"outside_read_only_held"`
	OutsideReadOnly     string `json:"outside_read_only"`
	// Broker says an escalation channel to the supervisor was handed to
	// the shell.
	Broker bool `json:"broker"`
	// Privileges is what CMD keeps of its privileges: PrivilegesNone,
	// PrivilegesNoNewPrivs, PrivilegesKept or PrivilegesSeatbelt.
	Privileges string `json:"privileges"`
	// Scoped says Landlock's IPC scopes hold for the tree: no signal and
	// no abstract unix socket reaches a process outside it.
	Scoped bool `json:"scoped"`
	// SocketsHeld says no unix socket outside the session but the
	// allowed ones is reachable from the shell, by Landlock or by the
	// mount layer, and Sockets says how, or why not.
	SocketsHeld bool   `json:"sockets_held"`
	Sockets     string `json:"sockets"`
	// TerminalHeld says the session never holds the person's terminal,
	// and Terminal how: its own pseudo-terminal or none, and TIOCSTI
	// refused.
	TerminalHeld bool   `json:"terminal_held"`
	Terminal     string `json:"terminal"`
	// ProcessesHeld says every process of the session ends with CMD (a
	// PID namespace), and Processes how, or why not.
	ProcessesHeld bool   `json:"processes_held"`
	Processes     string `json:"processes"`
	// GitHeld says the supervisor neutralizes, when the session ends, the
	// code-running git parts it planted (internal/gitguard); Git says what
	// holds, or why nothing does.
	GitHeld bool   `json:"git_held"`
	Git     string `json:"git"`
	// Caches are the toolchain caches of the session and how the shell
	// sees each (the supervisor's planCaches).
	Caches []plan.Cache `json:"caches,omitempty"`
	// NetworkHeld says the shell reaches over the network only what the
	// network setting allows, and Network how, or why not. Namespaced
	// says the shell has a network namespace of its own.
	NetworkHeld       bool   `json:"network_held"`
	Network           string `json:"network"`
	NetworkNamespaced bool   `json:"network_namespace"`
}

// AppliedPlan is the plan the session's child applied, as the record
// holds it: Plan with its file view, Mounts' plan.Files; nil without a
// Plan.
func (s Shell) AppliedPlan() *plan.Plan {
	if s.Plan == nil {
		return nil
	}
	p := *s.Plan
	if s.Mounts != nil {
		files := s.Mounts.Files
		p.Files = &files
	}
	return &p
}

// What a session's CMD keeps of its privileges (Shell.Privileges).
const (
	// PrivilegesNone: every capability set empty, bounding and ambient
	// included, securebits locked, no_new_privs.
	PrivilegesNone = "none"
	// PrivilegesNoNewPrivs: no capability to use and no_new_privs; the
	// bounding set is as it was (a user that is not root, without a
	// user namespace, cannot empty it).
	PrivilegesNoNewPrivs = "no_new_privs"
	// PrivilegesKept: danger-full-access, no sandbox.
	PrivilegesKept = "kept"
	// PrivilegesSeatbelt: the privileges CMD has (macOS has no
	// capability sets and no no_new_privs), under a Seatbelt profile that
	// every process it starts inherits and none can lift.
	PrivilegesSeatbelt = "seatbelt"
)

// SandboxSeatbelt is Shell.Sandbox of a session started under macOS's
// Seatbelt (sandbox-exec).
const SandboxSeatbelt = "seatbelt"

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

// removeStale removes the folders of sessions whose supervisor is gone: a
// supervisor killed with SIGKILL could not remove its own, and a record
// left behind could be named by a later session. Each record is read
// once: the placeholders of the sessions still running are the ones a
// stale session's removal leaves (removePlaceholders).
func removeStale(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, "session-*"))
	var stale []string
	var staleRecords []*Record
	var live []layout.Placeholder
	for _, d := range dirs {
		data, err := os.ReadFile(RecordPath(d))
		if err != nil {
			continue // being written, or not a session's
		}
		var r Record
		if json.Unmarshal(data, &r) != nil {
			continue
		}
		// A record of another pid namespace is left: its supervisor
		// cannot be seen from here, so it cannot be judged gone.
		if r.Supervisor > 0 && r.supervisorGone() {
			stale, staleRecords = append(stale, d), append(staleRecords, &r)
			continue
		}
		live = append(live, recordedPlaceholders(&r)...)
	}
	for i, d := range stale {
		removePlaceholdersBut(recordedPlaceholders(staleRecords[i]), live)
		Remove(d)
	}
}

// recordedPlaceholders are the placeholders r records as made or
// adopted (with their identity).
func recordedPlaceholders(r *Record) []layout.Placeholder {
	var out []layout.Placeholder
	if m := r.Shell.Mounts; m != nil {
		for _, h := range m.Placeholders {
			if h.Ino != 0 {
				out = append(out, h)
			}
		}
	}
	return out
}

// RecordPath is where Write puts the record of the session folder dir.
func RecordPath(dir string) string { return filepath.Join(dir, "session.json") }

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

// Remove removes a session's folder, its record with it: a record left
// behind could be named by a later session. So go the upper folders of
// its caches' overlays, read-only folders (a module cache's) included.
func Remove(dir string) error { return layout.RemoveTree(dir) }

// RefusedError says why a record named by DSH_FS_SESSION was not trusted.
type RefusedError struct {
	Path string
	Why  string
}

func (e *RefusedError) Error() string { return "session record " + e.Path + ": " + e.Why }

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

// checkPrivate checks that dir and every folder above it are owned by
// root or this user and writable by no one else, a sticky /tmp included:
// otherwise someone else could have swapped the record.
func checkPrivate(dir string) error {
	err := trust.CheckTrustedFolders(dir, false)
	var ue *trust.UnsafeError
	if errors.As(err, &ue) && strings.HasPrefix(ue.Why, "the folder may be written") {
		return fmt.Errorf("the folder %s may be written by others%s", ue.Path, strings.TrimPrefix(ue.Why, "the folder may be written by others"))
	}
	return err
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
