// Package plan is the one plan of a dsh-fs exec session (docs/design.md
// §10): what the session's first process sets up on itself before it
// becomes CMD, computed once on the host from the policy and applied
// inside by an applier that knows no policy (internal/session/child on
// Linux). It is plain data, JSON-serialisable, with no policy types: the
// writable folders, what is read-only, hidden and pinned, the sockets,
// the caches' copy-on-write layers, the network, the terminal and the
// session's init. Where a field's meaning is Linux's alone, its name or
// its doc comment says so; the rest is what another platform's enforcer
// would apply to the same plan.
package plan

import "github.com/dshfs/dsh-fs/internal/tty"

// Plan is what the session's first process applies before it becomes
// CMD. The supervisor sends it on the child's spec descriptor.
type Plan struct {
	// Path and Argv are CMD's program and arguments.
	Path string   `json:"path"`
	Argv []string `json:"argv"`
	// Env is CMD's environment; without it, the first process's own.
	Env []string `json:"env"`
	// RestrictWrites has the kernel refuse every write of CMD's process
	// tree outside Writable and Caches (and the devices a shell writes
	// to); on Linux, Landlock.
	RestrictWrites bool `json:"restrict_writes"`
	// Writable are the session's writable folders (its writable roots).
	Writable []string `json:"writable"`
	// Caches are the toolchain caches writable besides Writable.
	Caches []string `json:"caches"`
	// Files, when not nil, is the session's own view of the file system:
	// what is read-only, hidden and pinned (a mount namespace of its own
	// on Linux). EmptyFile is an empty regular file (mode 0400) bound
	// over the hidden files.
	Files     *Files `json:"files"`
	EmptyFile string `json:"empty_file"`
	// Unprivileged says CMD runs with no privilege and can gain none (no
	// capability and no_new_privs on Linux).
	Unprivileged bool `json:"unprivileged"`
	// Sockets, when not nil, are the only unix socket paths CMD may
	// connect to (Landlock's socket rules on Linux).
	Sockets []string `json:"sockets"`
	// Init makes the first process the init of the session's own process
	// tree (pid 1 of a PID namespace on Linux): it mounts the session's
	// /proc, starts CMD and stays its init. Ctty is the descriptor of
	// CMD's terminal (0 to 2), whose foreground CMD gets; -1 without one.
	Init bool `json:"init"`
	Ctty int  `json:"ctty"`
	// Network says the session has a network of its own (a network
	// namespace on Linux), whose loopback the first process brings up.
	Network bool `json:"network"`
	// ProxyFD, when not 0, is the descriptor of the channel to the
	// supervisor's proxy, which the first process's bridge serves on a
	// loopback port of its own (network: allowlist).
	ProxyFD int `json:"proxy_fd"`
	// ProxyPort, when not 0, is the loopback port of the session's proxy
	// where the platform gives the session no network of its own to serve
	// it in (macOS): the only address the shell may reach.
	ProxyPort int `json:"proxy_port,omitempty"`
	// Terminal, when not nil, has the first process make the session's
	// own terminal and hand its master to the supervisor.
	Terminal *Terminal `json:"terminal,omitempty"`
	// EndedFD, when not 0, is the descriptor of the pipe on which the
	// session's init tells the supervisor CMD's exit status once every
	// process of the session ended.
	EndedFD int `json:"ended_fd"`
	// Linux is what only Linux's applier reads.
	Linux Linux `json:"linux"`
}

// Linux is the part of a plan only Linux has words for.
type Linux struct {
	// IoUring leaves io_uring's calls to CMD (allow_io_uring); the
	// keyrings' are refused always.
	IoUring bool `json:"io_uring"`
}

// Terminal is how the first process makes the session's terminal: with
// the person's terminal's modes, as each of Streams (the standard
// streams that were the person's terminal; the first is the controlling
// one), its master sent over the socket at descriptor FD.
type Terminal struct {
	FD      int       `json:"fd"`
	Streams []int     `json:"streams"`
	Modes   tty.Modes `json:"modes"`
}

// DenialsFolder is the folder of a session's denial log beside its
// record: the session sees it read-only.
const DenialsFolder = "denials"
