package sandbox

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// landlockABI returns the kernel's Landlock ABI version, 0 when it has
// none. It is asked once per process.
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

// kernelLayer reports whether the Landlock layer guards mutations under p,
// and fails when p demands it and the kernel lacks it.
func kernelLayer(p Policy) (bool, error) {
	if p.Mode != WorkspaceWrite {
		return false, nil
	}
	switch p.Enforce {
	case EnforceAuto:
		return landlockABI() > 0, nil
	case EnforceLandlock:
		if landlockABI() == 0 {
			return false, fserr.New(fserr.ConfigInvalid, "enforce: landlock is not available on this kernel (use enforce: auto or off)")
		}
		return true, nil
	}
	return false, nil // off, or unset in a library caller's Policy
}

// kernelWritableExtra names folders, besides the writable roots, that
// the kernel layer (Enforce) and the read-only tree (readOnlyTree) leave
// writable. It exists for test binaries that run dsh-fs in their own
// process, whose coverage runtime writes GOCOVERDIR at exit, after the
// restriction is in place. The fence ignores it: no operation of dsh-fs
// may write there, and `dsh-fs policy` does not list it.
//
// A release build has no way to set it. It is unexported, so no other
// package can; nothing in this package's release files assigns it; and
// the one setter from outside, SetKernelWritableExtra, is in
// testhooks.go, which only a build with -tags dshfs_testhooks compiles
// (the e2e harness's coverage hook uses it). A build tag rather than a
// runtime check (testing.Testing, an environment variable): a runtime
// check is code the release binary carries and a session might reach; a
// file the compiler never sees is not. e2e/repo's TestTestHooksOutOfRelease
// checks both halves. The package's own tests set it directly.
var kernelWritableExtra []string

// applied records the folders this process already restricted its writes
// to: a long-lived process (dsh-fs mcp) builds one fence per call, and
// Landlock stacks at most 16 rulesets, so the same restriction is applied
// once and never again. It is process-global, not a Fence's, because what
// it records is: a Landlock ruleset binds the whole process (every
// thread, for good), and each fence of the process must see what the
// others applied.
var applied struct {
	sync.Mutex
	dirs string
}

// Enforce restricts this process, before its first mutation, so that the
// kernel itself refuses any write outside the writable roots: a bug in
// the fence still cannot write outside. Only the write rights are handled,
// so reads stay unrestricted everywhere; the writable roots and /dev/null
// get them all. It runs once per fence, in workspace-write mode only, and
// is permanent for the process. openDir calls it, so every mutation
// has it; reads, ls and stat never do.
func (f *Fence) Enforce() error {
	if f.enforced {
		return nil
	}
	on, err := kernelLayer(Policy{Mode: f.mode, Enforce: f.policy.Enforce})
	if err != nil || !on {
		return err
	}
	// The kernel layer holds the configured roots, not the ones an MCP
	// client's roots narrowed them to: it cannot be lifted, and the
	// client may name other folders later (roots/list_changed). The
	// narrowing is the fence's.
	p := f.policy
	p.Within = nil
	roots, err := WritableRoots(p)
	if err != nil {
		return err
	}
	dirs := existingDirs(append(RootPaths(roots), kernelWritableExtra...))
	applied.Lock()
	defer applied.Unlock()
	key := strings.Join(dirs, "\x00")
	if applied.dirs == key {
		f.enforced = true
		return nil
	}
	if err := restrictWrites(dirs, []string{os.DevNull}, 0); err != nil {
		return fserr.Wrap(fserr.IO, fmt.Sprintf("enforce: landlock: %v", err), err)
	}
	f.enforced = true
	applied.dirs = key
	return nil
}

// existingDirs returns the paths that are folders now: Landlock rules
// are made on opened paths, and a root that is gone has nothing to allow.
func existingDirs(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// deviceRights are handled and granted nowhere: a device node made in a
// writable root (a block device of the disk, /dev/mem's character
// device) would read what deny_read hides off the disk, or write it raw.
const deviceRights = landlock.AccessFSSet(llsys.AccessFSMakeChar | llsys.AccessFSMakeBlock)

// restrictWrites restricts this process, and what it starts, for good:
// the kernel refuses every write but beneath dirs (every write right the
// ABI has but making device nodes) and to the files named in devices
// (writing them, never making or removing anything there; a folder
// among them covers the files in it), each where it exists. scoped are
// the IPC scopes to restrict too (none for 0).
func restrictWrites(dirs, devices []string, scoped landlock.ScopedSet) error {
	abi := landlockABI()
	rights := writeRights(abi)
	fileRights := landlock.AccessFSSet(llsys.AccessFSWriteFile)
	if abi >= 3 {
		fileRights |= llsys.AccessFSTruncate
	}
	rules := []landlock.Rule{landlock.PathAccess(rights&^deviceRights, dirs...)}
	for _, d := range devices {
		rules = append(rules, landlock.PathAccess(fileRights, d).IgnoreIfMissing())
	}
	cfg := landlock.Config{HandledAccessFS: rights, Scoped: scoped}
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

// Layers says which enforcement layers guard a mutation under a policy.
type Layers struct {
	// Layers names the active layers, outermost first: "lexical" (the
	// fence's check of canonical paths), "root" (the mutation runs
	// through a handle confined to the writable root) and "landlock"
	// (the kernel refuses writes outside the writable roots).
	Layers []string `json:"layers"`
	// LandlockABI is the kernel's Landlock ABI version; 0 without one.
	LandlockABI int `json:"landlock_abi"`
}

// ActiveLayers returns the layers that guard a mutation under p. In
// read-only mode no mutation runs, and in danger-full-access there is no
// fence: both have none.
func ActiveLayers(p Policy) Layers {
	l := Layers{Layers: []string{}, LandlockABI: landlockABI()}
	if p.Mode == WorkspaceWrite {
		l.Layers = append(l.Layers, "lexical", "root")
		if on, _ := kernelLayer(p); on {
			l.Layers = append(l.Layers, "landlock")
		}
	}
	return l
}
