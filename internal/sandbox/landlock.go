package sandbox

import (
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// kernelLayer reports whether the Landlock layer guards mutations under p,
// and fails when p demands it and the kernel lacks it.
func kernelLayer(p policy.Policy) (bool, error) {
	if p.Mode != policy.WorkspaceWrite {
		return false, nil
	}
	switch p.Enforce {
	case policy.EnforceAuto:
		return landlockABI() > 0, nil
	case policy.EnforceLandlock:
		if landlockABI() == 0 {
			return false, fserr.New(fserr.ConfigInvalid, "enforce: "+noLandlock+" (use enforce: auto or off)")
		}
		return true, nil
	}
	return false, nil // off, or unset in a library caller's Policy
}

// A release build has no way to set kernelWritableExtra. It is unexported, so no other
// package can; nothing in this package's release files assigns it; and
// the one setter from outside, SetKernelWritableExtra, is in
// testhooks.go, which only a build with -tags dshfs_testhooks compiles
// (the e2e harness's coverage hook uses it). A build tag rather than a
// runtime check (testing.Testing, an environment variable): a runtime
// check is code the release binary carries and a session might reach; a
// file the compiler never sees is not. e2e/repo's TestTestHooksOutOfRelease
// checks both halves. The package's own tests set it directly.

// kernelWritableExtra names folders, besides the writable roots, that
// the kernel layer (Enforce) and the read-only tree (readOnlyTree) leave
// writable. It exists for test binaries that run dsh-fs in their own
// process, whose coverage runtime writes GOCOVERDIR at exit, after the
// restriction is in place. The fence ignores it: no operation of dsh-fs
// may write there, and `dsh-fs policy` does not list it.
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
	on, err := kernelLayer(policy.Policy{Mode: f.mode, Enforce: f.policy.Enforce})
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
	dirs := ExistingDirs(append(RootPaths(roots), kernelWritableExtra...))
	applied.Lock()
	defer applied.Unlock()
	key := strings.Join(dirs, "\x00")
	if applied.dirs == key {
		f.enforced = true
		return nil
	}
	if err := restrictWrites(dirs); err != nil {
		return fserr.Wrap(fserr.IO, fmt.Sprintf("enforce: landlock: %v", err), err)
	}
	f.enforced = true
	applied.dirs = key
	return nil
}

// ExistingDirs returns the paths that are folders now: Landlock rules
// are made on opened paths, and a root that is gone has nothing to allow.
func ExistingDirs(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		if fi, err := os.Stat(fsys.ToOS(p)); err == nil && fi.IsDir() {
			dirs = append(dirs, p)
		}
	}
	return dirs
}

// Layers says which enforcement layers guard a mutation under a policy.
type Layers struct {
	// Layers names the active layers, outermost first: "lexical" (the
	// fence's check of canonical paths), "root" (the mutation runs
	// through a handle confined to the writable root) and "landlock"
	// (the kernel refuses writes outside the writable roots).
	Layers []string `json:"layers"`
	// LandlockABI is the kernel's Landlock ABI version; 0 without one.
	LandlockABI int `json:"landlock_abi"`
	// Note says why there is no kernel layer where the OS has none to
	// give (macOS); empty elsewhere.
	Note string `json:"note,omitempty"`
}

// ActiveLayers returns the layers that guard a mutation under p. In
// read-only mode no mutation runs, and in danger-full-access there is no
// fence: both have none.
func ActiveLayers(p policy.Policy) Layers {
	l := Layers{Layers: []string{}, LandlockABI: landlockABI(), Note: kernelLayerNote}
	if p.Mode == policy.WorkspaceWrite {
		l.Layers = append(l.Layers, "lexical", "root")
		if on, _ := kernelLayer(p); on {
			l.Layers = append(l.Layers, "landlock")
		}
	}
	return l
}
