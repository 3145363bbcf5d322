package kernel

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// ABI returns the kernel's Landlock ABI version, 0 when it has
// none. It is asked once per process.
func ABI() int { return landlockABI() }

var landlockABI = sync.OnceValue(func() int {
	abi, err := llsys.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return 0
	}
	return abi
})

// writeRights returns the Landlock rights that change the file system,
// as far as the kernel's ABI knows them. Refer (ABI 2) and truncate
// (ABI 3) are added only where the ABI has them: asking for a right the
// kernel lacks would fail, and a best-effort downgrade would silently drop
// the whole restriction.
func writeRights(abi int) landlock.AccessFSSet {
	rights := landlock.AccessFSSet(llsys.AccessFSWriteFile | llsys.AccessFSRemoveDir | llsys.AccessFSRemoveFile |
		llsys.AccessFSMakeChar | llsys.AccessFSMakeDir | llsys.AccessFSMakeReg | llsys.AccessFSMakeSock |
		llsys.AccessFSMakeFifo | llsys.AccessFSMakeBlock | llsys.AccessFSMakeSym)
	if abi >= 2 {
		rights |= llsys.AccessFSRefer
	}
	if abi >= 3 {
		rights |= llsys.AccessFSTruncate
	}
	return rights
}

// deviceRights are handled and granted nowhere: a device node made in a
// writable root (a block device of the disk, /dev/mem's character
// device) would read what deny_read hides off the disk, or write it raw.
const deviceRights = landlock.AccessFSSet(llsys.AccessFSMakeChar | llsys.AccessFSMakeBlock)

// deviceFileRights are what the write layer grants on a device of its
// list at abi: writing, and truncating from ABI 3.
func deviceFileRights(abi int) landlock.AccessFSSet {
	rights := landlock.AccessFSSet(llsys.AccessFSWriteFile)
	if abi >= 3 {
		rights |= llsys.AccessFSTruncate
	}
	return rights
}

// WritesRights are the rights WritesRuleset grants on this kernel
// beneath a folder of its dirs and to a file of its devices: for a
// caller that adds rules to that ruleset itself (landlock_add_rule)
// where the paths are only made later, in the session's namespace.
func WritesRights() (dirs, devices uint64) {
	abi := ABI()
	return uint64(writeRights(abi) &^ deviceRights), uint64(deviceFileRights(abi))
}

// writesConfig is the ruleset of the write layer at abi: every write
// right the ABI has is handled; dirs get them all but making device
// nodes; each of devices gets writing (and truncating, ABI 3) where it
// exists; scoped adds sessionScopes.
func writesConfig(abi int, dirs, devices []string, scoped bool) (landlock.Config, []landlock.Rule) {
	rights, fileRights := writeRights(abi), deviceFileRights(abi)
	rules := []landlock.Rule{landlock.PathAccess(rights&^deviceRights, dirs...)}
	for _, d := range devices {
		rules = append(rules, landlock.PathAccess(fileRights, d).IgnoreIfMissing())
	}
	cfg := landlock.Config{HandledAccessFS: rights}
	if scoped {
		cfg.Scoped = sessionScopes(abi)
	}
	return cfg, rules
}

// WritesRuleset readies the write layer as a Landlock ruleset and
// returns its descriptor (close-on-exec; the caller closes it). It
// restricts nothing: a process that installs it (the session's first
// process with landlock_restrict_self(fd, 0) after no_new_privs, or
// RestrictAllThreads) is then refused every write but beneath dirs (every
// write right the ABI has but making device nodes) and to the files
// named in devices (writing them, never making or removing anything
// there; a folder among them covers the files in it), each where it
// exists. scoped adds a session's IPC scopes where the ABI has them
// (sessionScopes).
func WritesRuleset(dirs, devices []string, scoped bool) (int, error) {
	cfg, rules := writesConfig(ABI(), dirs, devices, scoped)
	return readyRuleset(cfg, rules)
}

// readyRuleset makes the ruleset of cfg and rules by go-landlock's
// NewRulesetFD, the construction its Config.Restrict enforces, not a
// copy: the same checks against the ABI, each path opened
// O_PATH|O_CLOEXEC, an IgnoreIfMissing path skipped on ENOENT alone,
// nothing left open on failure. Restrict adds a rule only where read-dir
// is handled (on /proc/PID/task, which libpsx lists), never here. None
// of these asks for a restrict flag, so landlock_restrict_self(fd, 0)
// installs the ruleset as Restrict would.
func readyRuleset(cfg landlock.Config, rules []landlock.Rule) (int, error) {
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, err
	}
	if fd < 0 || flags != 0 {
		if fd >= 0 {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("landlock: ruleset %v: descriptor %d, restrict flags %#x: want a ruleset installed with none", cfg, fd, flags)
	}
	return fd, nil
}

// RestrictAllThreads installs the Landlock ruleset on every thread of
// this process, for good, with no_new_privs, as go-landlock's
// Config.Restrict enforces one: through libpsx before ABI 8, with the
// kernel's thread sync (LANDLOCK_RESTRICT_SELF_TSYNC) from it. A
// process that goes on running Go code needs it: its goroutines move
// between threads, so a restriction on one thread would hold for
// whatever code happens to run there.
func RestrictAllThreads(ruleset int) error {
	abi := libraryABI()
	if abi < 8 {
		if err := llsys.AllThreadsPrctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
		return restrictSelfError(llsys.AllThreadsLandlockRestrictSelf(ruleset, 0))
	}
	flags := uint32(llsys.FlagRestrictSelfTSync | llsys.FlagRestrictSelfNoNewPrivs)
	if abi < 11 {
		// No flag for no_new_privs before ABI 11: set on this thread,
		// which the kernel's sync copies from.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		flags &^= llsys.FlagRestrictSelfNoNewPrivs
		if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
			return fmt.Errorf("no_new_privs: %w", err)
		}
	}
	return restrictSelfError(llsys.LandlockRestrictSelf(ruleset, flags))
}

// libraryABI is the ABI as go-landlock counts it when it picks how to
// restrict every thread: from 6 up, a kernel whose signal scope lacks its
// fix (erratum 2) counts as 5.
func libraryABI() int {
	abi := ABI()
	if abi >= 6 {
		if errata, err := llsys.LandlockGetErrata(); err != nil || errata&2 == 0 {
			return 5
		}
	}
	return abi
}

// restrictSelfError names landlock_restrict_self's failure.
func restrictSelfError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.E2BIG):
		return fmt.Errorf("the maximum number of stacked rulesets is reached for the current thread: %w", err)
	}
	return fmt.Errorf("landlock_restrict_self: %w", err)
}

// RestrictProcessWrites restricts every thread of this process, and what
// it starts, for good, with the write layer (WritesRuleset) unscoped:
// the file tool's own kernel layer (sandbox's Fence.Enforce, behind
// pkg/sandbox's RestrictProcess). That process goes on running Go code
// on every thread, and any of them may make the next mutation
// (RestrictAllThreads).
func RestrictProcessWrites(dirs, devices []string) error {
	fd, err := WritesRuleset(dirs, devices, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	return RestrictAllThreads(fd)
}

// sessionScopes are the IPC scopes of a session's tree where the ABI has
// them (6 and newer): no signal, and no connection to an abstract unix
// socket, reaches a process outside the session's Landlock domain — the
// supervisor, the person's shell, a tmux or D-Bus server. Within the
// session both work as ever. ptrace of outside processes Landlock
// refuses at every ABI.
func sessionScopes(abi int) landlock.ScopedSet {
	if abi < 6 {
		return 0
	}
	return landlock.ScopedSet(llsys.ScopeSignal | llsys.ScopeAbstractUnixSocket)
}

// ScopesHeld says whether a session's tree on this kernel is scoped
// (sessionScopes): its Landlock ABI is 6 or newer.
func ScopesHeld(abi int) bool { return sessionScopes(abi) != 0 }

// LoopbackUp brings up the loopback interface of this process's network
// namespace: a new namespace has "lo" and nothing else, down. It needs
// CAP_NET_ADMIN in the namespace's user namespace.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: get flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("loopback: bring up: %w", err)
	}
	return nil
}

// socketRuleset is the Landlock ruleset of SocketsRuleset: it handles
// the resolve-unix right alone, so it restricts nothing else, and grants
// it beneath each of grants that exists.
func socketRuleset(grants []string) (landlock.Config, []landlock.Rule) {
	right := landlock.AccessFSSet(llsys.AccessFSResolveUnix)
	cfg := landlock.Config{HandledAccessFS: right}
	var rules []landlock.Rule
	for _, g := range grants {
		rules = append(rules, landlock.PathAccess(right, g).IgnoreIfMissing())
	}
	return cfg, rules
}

// SocketsRuleset readies the socket layer as a Landlock ruleset and
// returns its descriptor (close-on-exec; the caller closes it),
// restricting nothing: a thread that installs it is refused connect(2)
// and sendmsg(2) on every pathname unix socket made outside its Landlock
// domain but beneath grants. It is a ruleset of its own, stacked on the
// write layer, so each holds alone. It needs Landlock ABI 9
// (layout.SocketLandlock), and fails without it, FS_IO.
func SocketsRuleset(grants []string) (int, error) {
	if ABI() < SocketRulesABI {
		return -1, fserr.New(fserr.IO, fmt.Sprintf("landlock ABI %d has no right for unix sockets (needs %d)", ABI(), SocketRulesABI))
	}
	fd, err := readyRuleset(socketRuleset(grants))
	if err != nil {
		return -1, fserr.Wrap(fserr.IO, fmt.Sprintf("landlock: unix sockets: %v", err), err)
	}
	return fd, nil
}
