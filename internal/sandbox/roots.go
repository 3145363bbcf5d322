package sandbox

import (
	"os"
	"slices"

	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// Root is one canonical writable root and where it came from.
type Root struct {
	// Path is the canonical absolute path: symlinks resolved.
	Path string `json:"path"`
	// Origin is "cwd", "tmp" or "writable_roots".
	Origin string `json:"origin"`
}

// RefusedRoot is a folder that would have been a writable root but that
// the trusted policy does not allow: a workspace that is too broad or
// outside the trusted workspaces, or a TMPDIR outside the allowed roots.
// Calls go on; writes beneath it are denied with Reason.
type RefusedRoot struct {
	// Path is the canonical absolute path.
	Path string `json:"path"`
	// Origin is "cwd", "tmp" or, outside the client's roots,
	// "writable_roots".
	Origin string `json:"origin"`
	// Reason is ReasonWorkspaceTooBroad, ReasonOutsideWorkspaces,
	// ReasonTmpdirNotAllowed or ReasonOutsideClientRoots.
	Reason string `json:"reason"`
	// Matched names the session source that proposed it: "working
	// directory /", "--cwd ..", "DSH_FS_CWD=/", "TMPDIR=/".
	Matched string `json:"matched"`
}

// WritableRoots derives the writable set of p, the one place that knows
// it (the fence, `dsh-fs policy` and the kernel layer all ask): the
// session cwd, the temp areas (/tmp and os.TempDir(), unless p.Tmp is
// false) and p.WritableRoots (relative ones taken from the cwd), each
// canonicalized and listed once, a missing one under its canonical
// spelling. The cwd and os.TempDir() are the session's proposals and do
// not widen the trusted policy (docs/design.md §2); RefusedRoots lists
// what is refused. p's paths may be spelled as the OS spells them; the
// roots are in the fence's spelling (fencePaths).
func WritableRoots(p policy.Policy) ([]Root, error) {
	roots, _, err := deriveRoots(fencePaths(p))
	return roots, err
}

// RefusedRoots lists the candidates WritableRoots left out, and why.
func RefusedRoots(p policy.Policy) ([]RefusedRoot, error) {
	_, refused, err := deriveRoots(fencePaths(p))
	return refused, err
}

func deriveRoots(p policy.Policy) ([]Root, []RefusedRoot, error) {
	var roots []Root
	var refused []RefusedRoot
	seen := map[string]bool{}
	add := func(path, origin string) error {
		canon, err := canonicalPath(p.Cwd, path)
		if err != nil {
			return err
		}
		if !seen[canon] {
			seen[canon] = true
			roots = append(roots, Root{Path: canon, Origin: origin})
		}
		return nil
	}
	if reason := workspaceRefusal(p); reason != "" {
		refused = append(refused, RefusedRoot{Path: p.Cwd, Origin: "cwd", Reason: reason, Matched: p.CwdSource})
	} else if err := add(p.Cwd, "cwd"); err != nil {
		return nil, nil, err
	}
	var configured []string
	for _, r := range p.WritableRoots {
		c, err := canonicalPath(p.Cwd, r)
		if err != nil {
			return nil, nil, err
		}
		configured = append(configured, c)
	}
	if p.Tmp {
		if t := sharedTmp(); t != "" {
			if err := add(t, "tmp"); err != nil {
				return nil, nil, err
			}
		}
		tmpdir, err := canonicalPath(p.Cwd, os.TempDir())
		if err != nil {
			return nil, nil, err
		}
		allowed := append(append(RootPaths(roots), configured...), canonicalAllowRoots(p)...)
		if pathmatch.BeneathAny(allowed, tmpdir) {
			if err := add(tmpdir, "tmp"); err != nil {
				return nil, nil, err
			}
		} else {
			refused = append(refused, RefusedRoot{Path: tmpdir, Origin: "tmp", Reason: policy.ReasonTmpdirNotAllowed, Matched: tmpdirSource()})
		}
	}
	for _, c := range configured {
		if err := add(c, "writable_roots"); err != nil {
			return nil, nil, err
		}
	}
	if p.Within != nil {
		roots, refused = withinClient(roots, refused, p.Within)
	}
	return roots, refused, nil
}

// Intersect returns the parts of folders that lie within one of client:
// a folder inside a client folder whole, a client folder inside a folder
// itself. Both lists are canonical.
func Intersect(folders, client []string) []string {
	var out []string
	for _, f := range folders {
		for _, c := range client {
			var m string
			switch {
			case Beneath(c, f):
				m = f
			case Beneath(f, c):
				m = c
			default:
				continue
			}
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// withinClient narrows roots to the parts inside the client's folders: a
// root inside one stays whole, a client folder inside a root becomes a
// root of the same origin, and a root not wholly inside one is refused
// for the rest.
func withinClient(roots []Root, refused []RefusedRoot, client []string) ([]Root, []RefusedRoot) {
	var out []Root
	seen := map[string]bool{}
	keep := func(r Root) {
		if !seen[r.Path] {
			seen[r.Path] = true
			out = append(out, r)
		}
	}
	for _, r := range roots {
		met := Intersect([]string{r.Path}, client)
		for _, m := range met {
			keep(Root{Path: m, Origin: r.Origin})
		}
		if !slices.Contains(met, r.Path) {
			// Partly or not at all within them: what is outside is
			// refused, for a denial that says why.
			refused = append(refused, RefusedRoot{Path: r.Path, Origin: r.Origin, Reason: policy.ReasonOutsideClientRoots, Matched: "the MCP client's roots"})
		}
	}
	return out, refused
}

// tooBroadTrees are system trees no session cwd at or beneath is a
// workspace; tooBroadExact are folders that hold projects (/srv/app,
// /opt/tool, /var/www/site) but are never a workspace themselves.
var (
	tooBroadTrees = []string{"/etc", "/usr", "/bin", "/sbin", "/lib*", "/boot", "/proc", "/sys", "/dev", "/run"}
	tooBroadExact = []string{"/", "/var", "/opt", "/srv"}
)

// windowsTooBroad are Windows' in the fence's spelling (docs/design.md
// §4, On Windows): a drive's root, the folder of every user's home and
// the machine's data are never a workspace, the system's trees never
// hold one. Matched in any case, as Windows names them.
var windowsTooBroad = broadLists{
	trees: []string{"/?:/Windows", "/?:/Program Files", "/?:/Program Files (x86)"},
	exact: []string{"/", "/?:", "/?:/Users", "/?:/ProgramData"},
}

// broadLists are the folders no workspace may be (exact) and the trees
// none may lie in (trees), as globs.
type broadLists struct{ trees, exact []string }

// workspaceRefusal says why the session cwd of p is not a writable
// workspace, or "" when it is. A cwd a trusted source pins, or that a
// trusted workspaces entry names exactly, is never too broad.
func workspaceRefusal(p policy.Policy) string {
	if p.CwdTrusted || p.Cwd == "" {
		return ""
	}
	exact := false
	for _, w := range p.Workspaces {
		if p.ExpandHome(w) == p.Cwd {
			exact = true
		}
	}
	if !exact && tooBroad(p.Cwd, p.Home) {
		return policy.ReasonWorkspaceTooBroad
	}
	if len(p.Workspaces) == 0 || exact {
		return ""
	}
	for _, w := range p.Workspaces {
		g := p.ExpandHome(w)
		// An entry names a folder and everything beneath it.
		for dir := range ancestors(p.Cwd) {
			if pathmatch.Match(g, dir) {
				return ""
			}
		}
	}
	return policy.ReasonOutsideWorkspaces
}

// tooBroad reports whether a workspace at dir would open the whole
// system or the whole home folder to writes.
func tooBroad(dir, home string) bool { return osTooBroad.covers(dir, home) }

// covers reports whether a workspace at dir is too broad by l: dir is the
// home folder, one of l's exact folders, or lies in one of its trees.
// Names match in any case where the OS's do (pathmatch.Folded).
func (l broadLists) covers(dir, home string) bool {
	if home != "" && pathmatch.Folded(dir) == pathmatch.Folded(home) {
		return true
	}
	for _, e := range l.exact {
		if pathmatch.Match(pathmatch.Folded(e), pathmatch.Folded(dir)) {
			return true
		}
	}
	for _, tree := range l.trees {
		for d := range ancestors(dir) {
			if d != "/" && pathmatch.Match(pathmatch.Folded(tree), pathmatch.Folded(d)) {
				return true
			}
		}
	}
	return false
}

// canonicalAllowRoots returns p.AllowRoots, "~" expanded, canonicalized;
// an entry that cannot be canonicalized allows nothing.
func canonicalAllowRoots(p policy.Policy) []string {
	var out []string
	for _, r := range p.AllowRoots {
		if c, err := canonicalPath(p.Cwd, p.ExpandHome(r)); err == nil {
			out = append(out, c)
		}
	}
	return out
}

// AllowsSessionRoot reports whether a session source may add the
// canonical folder dir as a writable root: it must lie beneath an
// allow_roots entry or beneath a root the trusted policy p already makes
// writable, so adding it widens nothing.
func AllowsSessionRoot(trusted policy.Policy, dir string) (bool, error) {
	roots, err := WritableRoots(trusted)
	if err != nil {
		return false, err
	}
	return pathmatch.BeneathAny(append(RootPaths(roots), canonicalAllowRoots(fencePaths(trusted))...), osPath(dir)), nil
}

// Beneath reports whether the canonical target lies at or beneath the
// canonical folder root, by whole components, either spelled as the OS
// spells it (Canonical's) or as the fence does.
func Beneath(root, target string) bool {
	_, ok := pathmatch.Within(osPath(root), osPath(target))
	return ok
}

// RootPaths returns the paths of roots, in order.
func RootPaths(roots []Root) []string {
	out := make([]string, len(roots))
	for i, r := range roots {
		out[i] = r.Path
	}
	return out
}

// sameFileAncestor looks for an ancestor of target (target included) that
// is the same file as root by device and inode, so that an alias spelling
// of a root (a bind mount, a case-insensitive name) is recognized without
// ever treating an unrelated prefix as containment. It returns target's
// path relative to that ancestor.
func sameFileAncestor(rootInfo os.FileInfo, target string) (string, bool) {
	rel := ""
	for dir := range ancestors(target) {
		if fi, err := os.Stat(fsys.ToOS(dir)); err == nil && os.SameFile(fi, rootInfo) {
			if rel == "" {
				rel = "."
			}
			return rel, true
		}
		if rel == "" {
			rel = baseOf(dir)
		} else {
			rel = baseOf(dir) + "/" + rel
		}
	}
	return "", false
}
