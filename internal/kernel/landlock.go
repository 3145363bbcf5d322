package kernel

import (
	"fmt"
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

// RestrictWrites restricts this process, and what it starts, for good:
// the kernel refuses every write but beneath dirs (every write right the
// ABI has but making device nodes) and to the files named in devices
// (writing them, never making or removing anything there; a folder
// among them covers the files in it), each where it exists. scoped adds
// a session's IPC scopes where the ABI has them (sessionScopes).
func RestrictWrites(dirs, devices []string, scoped bool) error {
	abi := ABI()
	rights := writeRights(abi)
	fileRights := landlock.AccessFSSet(llsys.AccessFSWriteFile)
	if abi >= 3 {
		fileRights |= llsys.AccessFSTruncate
	}
	rules := []landlock.Rule{landlock.PathAccess(rights&^deviceRights, dirs...)}
	for _, d := range devices {
		rules = append(rules, landlock.PathAccess(fileRights, d).IgnoreIfMissing())
	}
	cfg := landlock.Config{HandledAccessFS: rights}
	if scoped {
		cfg.Scoped = sessionScopes(abi)
	}
	return cfg.Restrict(rules...)
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

// SocketRulesABI is the first Landlock ABI with the resolve-unix right.
const SocketRulesABI = 9

// socketRuleset is the Landlock ruleset of RestrictSockets: it handles
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

// RestrictSockets restricts this process, and every process it will
// start, so that the kernel refuses connect(2) and sendmsg(2) on every
// pathname unix socket made outside this Landlock domain but beneath
// grants. It is a ruleset of its own, stacked on the session child's write restriction, so each
// holds alone. It needs Landlock ABI 9 (layout.SocketLandlock), and fails
// without it.
func RestrictSockets(grants []string) error {
	if ABI() < SocketRulesABI {
		return fserr.New(fserr.IO, fmt.Sprintf("landlock ABI %d has no right for unix sockets (needs %d)", ABI(), SocketRulesABI))
	}
	cfg, rules := socketRuleset(grants)
	if err := cfg.RestrictPaths(rules...); err != nil {
		return fserr.Wrap(fserr.IO, fmt.Sprintf("landlock: unix sockets: %v", err), err)
	}
	return nil
}
