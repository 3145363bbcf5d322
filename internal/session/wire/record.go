// Package session pins the policy of a dsh-fs exec session: the record
// that exec writes where the session cannot, and the checks that a
// record named by DSH_FS_SESSION is one (docs/design.md §10).
package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/dshfs/dsh-fs/internal/policy"
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
