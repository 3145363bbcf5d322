package sandbox

import (
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// Fence applies one Policy to the paths of one call. It is not safe for
// concurrent use.
type Fence struct {
	policy    policy.Policy
	mode      policy.Mode
	escalated bool
	enforced  bool // the kernel layer is in place
	// beforeRename, when set (by this package's tests), runs between a
	// move's decision and its rename: the window a race test widens.
	beforeRename func()
	// idBudget, when above 0 (set by this package's tests), bounds the
	// identity walk below MaxIdentityEntries.
	idBudget int

	// approver is this call's escalation and who is asked for it
	// (SetApprover); its zero value asks for none.
	approver policy.Approver
	// approved are the canonical paths an approver approved this call
	// to change (checkApproved); nil when nobody was asked.
	approved map[string]bool

	roots      []Root
	refused    []RefusedRoot
	rootInfos  []os.FileInfo
	rootsErr   error
	rootsReady bool

	absProtected []string // canonical paths protected with all beneath them
	// gitPointed are the canonical git folders the roots' .git pointers
	// lead to, whose protected parts are protected whatever they hold.
	gitPointed []string
	denyRead   []denyGlob // deny_read globs, "~" expanded, anchored
	denyIdx    denyIndex  // denyRead compiled (DenyMatcher)
	// sessionIDs are the policy's DenyIdentities by identity, made on
	// first use.
	sessionIDs struct {
		once sync.Once
		ids  map[fileID]string
	}
}

// NewFence returns the fence of policy p.
func NewFence(p policy.Policy) *Fence {
	p = fencePaths(p)
	f := &Fence{policy: p, mode: p.Mode}
	prefixes := prefixResolver{cwd: p.Cwd}
	for _, g := range p.DenyRead {
		g = p.ExpandHome(g)
		switch {
		case strings.HasPrefix(g, "~"):
			// No home to expand it from: it names nothing, and a "~"
			// taken from $HOME would let the session move the secret.
			continue
		case !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "**/"):
			// A relative glob names such a path wherever it is.
			g = "**/" + g
		}
		f.denyRead = append(f.denyRead, denyGlob{g, g})
		// A secret folder reached through a symlinked spelling of the
		// glob's own prefix ($HOME a symlink, ~/.ssh a symlink) is
		// matched by its canonical spelling too.
		if c := prefixes.canonicalGlob(g); c != g {
			f.denyRead = append(f.denyRead, denyGlob{c, g})
		}
	}
	return f
}

// denyGlob is a deny_read glob to match, and the glob to name in a denial
// (the configured one, when match is its canonical spelling).
type denyGlob struct{ match, shown string }

// Mode returns the effective mode: the session's, or the escalated one.
func (f *Fence) Mode() policy.Mode { return f.mode }

// Escalated reports whether an escalation was granted in this call.
func (f *Fence) Escalated() bool { return f.escalated }

// Policy returns the fence's policy.
func (f *Fence) Policy() policy.Policy { return f.policy }

// Roots returns the canonical writable roots, computed once per fence.
func (f *Fence) Roots() ([]Root, error) {
	if !f.rootsReady {
		f.rootsReady = true
		f.roots, f.refused, f.rootsErr = deriveRoots(f.policy)
		if f.rootsErr == nil {
			f.loadAbsProtected()
		}
	}
	return f.roots, f.rootsErr
}

func (f *Fence) rootPaths() []string {
	roots, _ := f.Roots()
	return RootPaths(roots)
}

// loadAbsProtected collects the protected paths that are not globs: every
// trusted config path, whether it exists or was loaded or not (a session
// that could create the user's config file would set the next call's
// policy), and the config files this call loaded; and the git folders a
// ".git" pointer at the top of a root leads to (a worktree's or
// submodule's real git folder), of which only what is protected in any
// git directory is protected (pathmatch.GitProtectedIn).
func (f *Fence) loadAbsProtected() {
	for _, file := range append(slices.Clip(f.policy.TrustedFiles), f.policy.ConfigFiles...) {
		if c, err := canonicalPath(f.policy.Cwd, file); err == nil {
			f.absProtected = append(f.absProtected, c)
		}
	}
	for _, r := range f.roots {
		f.gitPointed = append(f.gitPointed, GitPointerTargets(r.Path)...)
	}
}

// GitPointerTargets returns, canonical, the git folders the ".git" at the
// top of root leads to when it is not the repository itself: the gitdir a
// ".git" pointer file names (a worktree's or submodule's real git folder)
// and, for a worktree, the repository its commondir names; or the target
// of a ".git" symlink.
func GitPointerTargets(root string) []string {
	var out []string
	dotgit := joinPath(root, ".git")
	if gitdir, ok := pathmatch.ReadGitdir(dotgit); ok {
		if c, err := canonicalPath(root, gitdir); err == nil {
			out = append(out, c)
			// A worktree's gitdir names, in commondir, the repository
			// whose hooks and config git uses for it.
			if common, ok := pathmatch.ReadCommondir(c); ok {
				if cc, err := canonicalPath(c, common); err == nil {
					out = append(out, cc)
				}
			}
		}
	} else if c, err := canonicalPath(root, ".git"); err == nil && c != dotgit {
		// .git is a symlink: its target is the repository.
		out = append(out, c)
	}
	return out
}

// Resolve canonicalizes path against the session cwd.
func (f *Fence) Resolve(path string) (Target, error) {
	path, err := fromOS(path)
	if err != nil {
		return Target{Given: path}, err
	}
	canon, err := canonicalPath(f.policy.Base(), path)
	if err != nil {
		return Target{Given: path}, err
	}
	return Target{Given: path, Path: canon}, nil
}

// ResolveName is Resolve for an operation on the name itself, which never
// follows a final symlink (remove, as rm does): the folder part is
// canonicalized and the last name kept as written. A path whose last
// name is "." or ".." names a folder, and is resolved as Resolve does.
func (f *Fence) ResolveName(path string) (Target, error) {
	path, err := fromOS(path)
	if err != nil {
		return Target{Given: path}, err
	}
	trimmed := strings.TrimRight(path, "/")
	dir, name := splitDir(trimmed)
	if name == "" || name == "." || name == ".." || trimmed != path {
		return f.Resolve(path)
	}
	if dir == "" {
		dir = "."
	}
	canon, err := canonicalPath(f.policy.Base(), dir)
	if err != nil {
		return Target{Given: path}, err
	}
	return Target{Given: path, Path: joinPath(canon, name), name: true}, nil
}
