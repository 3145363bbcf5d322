package layout

// Protected paths that a mount cannot cover as they are: reached through
// a symlink present at the start, or missing at the start. The symlinks
// are pinned themselves, so the session can neither remove nor replace
// one with a folder of its own. The planning is PlanMounts'
// (planProtectedEdges); exec's supervisor makes the placeholders before
// the session (MakePlaceholders) and removes them after it
// (RemovePlaceholders), and so does the next session's clean-up of a
// supervisor killed before it could (wire.removeStale).

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Placeholder is a protected path missing at the start, held by an empty
// folder (Dir) or an empty file made on disk at its first missing
// component and bound read-only in the session: the session cannot make
// what it protects. Dev and Ino are its identity once made: only the
// same file, still empty, is removed after the session.
type Placeholder struct {
	Path string `json:"path"`
	Dir  bool   `json:"dir"`
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
}

// gitPlaceholders are the entries of a root's own .git folder held by a
// placeholder where .git exists and they do not: the code-running ones
// of the git guard's list. commondir and gitdir are left out: an empty
// one is not harmless, git reads it as a path.
var gitPlaceholders = []string{"config", "config.worktree", "hooks/", "info/attributes", "objects/info/alternates", "objects/info/http-alternates"}

// protectedEdges is what planProtectedEdges found: the canonical targets
// of protected paths reached through a symlink (to bind read-only), the
// symlinks in the roots those paths are reached through (to pin: each
// is the path as much as its target is), the placeholders of protected
// paths that are missing, and the edges looked at.
type protectedEdges struct {
	targets, links []string
	holders        []Placeholder
	edges          []protectedEdge
}

// planProtectedEdges returns the protected edges of a workspace-write
// session with the writable roots roots. Only the literal head of a
// protected glob relative to a root is looked at (".codex" of
// ".codex/**", ".mcp.json"; nothing of "**/.bashrc"), and a root's own
// .git folder: nothing below a folder that is not a root, so `git init`
// in a new folder stays possible. What lies outside the roots is
// read-only anyway, and left; a link in a root that leads there is not.
func planProtectedEdges(p policy.Policy, roots []sandbox.Root) (pe protectedEdges) {
	if p.Mode != policy.WorkspaceWrite {
		return pe
	}
	rootPaths := sandbox.RootPaths(roots)
	seen, linked := map[string]bool{}, map[string]bool{}
	edge := func(root, path string, dir bool) {
		e := protectedEdge{rootPaths: rootPaths, root: root, path: path, dir: dir}
		l := e.look()
		for _, link := range l.links {
			if !linked[link] {
				linked[link] = true
				pe.links = append(pe.links, link)
			}
		}
		if l.c == "" || seen[l.c] {
			return
		}
		seen[l.c] = true
		switch {
		case l.viaLink:
			pe.targets = append(pe.targets, l.c) // its anchor "": the links and their target
		case !l.missing:
			e.anchor = l.c
		case l.held:
			e.anchor = filepath.Dir(l.holder.Path)
			if !seen[l.holder.Path+"\x00"] {
				seen[l.holder.Path+"\x00"] = true
				pe.holders = append(pe.holders, l.holder)
			}
		}
		pe.edges = append(pe.edges, e)
	}
	for _, r := range roots {
		if r.Origin == "tmp" {
			continue
		}
		for _, g := range p.Protected {
			g = p.ExpandHome(g)
			if strings.HasPrefix(g, "~") || strings.HasPrefix(g, "/") {
				continue
			}
			if head, dir := literalHead(g); head != "" {
				edge(r.Path, head, dir)
			}
		}
		if fi, err := os.Lstat(filepath.Join(r.Path, ".git")); err == nil && fi.IsDir() {
			for _, e := range gitPlaceholders {
				edge(r.Path, filepath.Join(".git", e), strings.HasSuffix(e, "/"))
			}
		}
	}
	slices.Sort(pe.targets)
	slices.Sort(pe.links)
	return pe
}

// protectedEdge is a protected path planProtectedEdges looked at: the
// path relative to its root, whether it names a folder, the writable
// roots, and its anchor, the one path whose being there the plan's
// answer rests on: the path itself where it was there, else the folder
// its placeholder was planned in. Where the answer rests on more than
// one path (reached through a symlink: the link and its target) or on
// none (a file above it), the anchor is "" and the refresh looks at the
// edge whole again.
type protectedEdge struct {
	rootPaths  []string
	root, path string
	dir        bool
	anchor     string
}

// edgeLook is what an edge asks of the plan now: its canonical path ("" when
// it is none of the plan's: unresolvable, or outside the roots), the
// symlinks in the roots it is reached through, whether it is reached
// through one, or missing, and then its placeholder, where one can be
// made (held).
type edgeLook struct {
	c                string
	links            []string
	viaLink, missing bool
	holder           Placeholder
	held             bool
}

// look resolves e and looks at what is there now. The links are looked
// for only where the path is no plain one (a second walk, rare), and
// kept wherever they lead: outside the roots, nowhere, or in a loop.
func (e protectedEdge) look() (l edgeLook) {
	c, err := sandbox.Canonical(e.root, e.path)
	plain := filepath.Join(e.root, e.path)
	if err != nil || c != plain {
		for _, link := range sandbox.LinksOn(e.root, e.path) {
			if pathmatch.BeneathAny(e.rootPaths, link) {
				l.links = append(l.links, link)
			}
		}
	}
	if err != nil || !pathmatch.BeneathAny(e.rootPaths, c) {
		return edgeLook{links: l.links}
	}
	l.c = c
	if _, err := os.Lstat(c); err == nil {
		l.viaLink = c != plain
		return l
	}
	l.missing = true
	l.holder, l.held = firstMissing(c, e.dir)
	return l
}

// addProtectedEdges adds to m the protected symlinks' targets and the
// placeholders of planProtectedEdges, both bound read-only, and the
// symlinks, pinned.
func (m *MountPlan) addProtectedEdges(p policy.Policy, roots []sandbox.Root) {
	pe := planProtectedEdges(p, roots)
	set := map[string]bool{}
	for _, r := range append(m.ReadOnly, pe.targets...) {
		set[r] = true
	}
	for _, h := range pe.holders {
		set[h.Path] = true
	}
	m.ReadOnly, m.Placeholders, m.edges = sortedKeys(set), pe.holders, pe.edges
	m.PinnedLinks = pe.links
}

// RefreshPlaceholders adds to m the placeholders of protected paths
// missing now that were not when m was planned (a concurrent session's
// placeholder, removed since), bound read-only, in path order: a folder
// before what lies in it (MakePlaceholders makes them in order). It runs
// under the runtime folder's lock, on the start's path, so an edge whose
// anchor is still there costs one lstat; the others are looked at whole.
func RefreshPlaceholders(m *MountPlan) {
	var holders []Placeholder
	for _, e := range m.edges {
		if e.anchor != "" {
			if _, err := os.Lstat(e.anchor); err == nil {
				continue
			}
		}
		if l := e.look(); l.held {
			holders = append(holders, l.holder)
		}
	}
	added := false
	for _, h := range holders {
		if !slices.ContainsFunc(m.Placeholders, func(o Placeholder) bool { return o.Path == h.Path }) {
			m.Placeholders, added = append(m.Placeholders, h), true
			if !slices.Contains(m.ReadOnly, h.Path) {
				m.ReadOnly = append(m.ReadOnly, h.Path)
				slices.Sort(m.ReadOnly)
			}
		}
	}
	if added {
		slices.SortStableFunc(m.Placeholders, func(a, b Placeholder) int { return strings.Compare(a.Path, b.Path) })
	}
	dropBeneathPlaceholders(m)
}

// dropBeneathPlaceholders drops from m what lies beneath one of its
// placeholder folders and is not there, from every list of paths the
// child mounts on (binds, pins, covers) and the placeholders alike: it
// was planned while another session's placeholders stood, and went with
// them; a pin is planned from the binds beneath it, so it goes with
// them. The folder, bound read-only, holds it; mounting on it would find
// nothing, and the session would not start.
func dropBeneathPlaceholders(m *MountPlan) {
	var dirs []string
	for _, h := range m.Placeholders {
		if h.Dir {
			dirs = append(dirs, h.Path+string(filepath.Separator))
		}
	}
	if len(dirs) == 0 {
		return
	}
	goneBeneath := func(path string) bool {
		if !slices.ContainsFunc(dirs, func(d string) bool { return strings.HasPrefix(path, d) }) {
			return false
		}
		_, err := os.Lstat(path)
		return errors.Is(err, fs.ErrNotExist)
	}
	m.Placeholders = slices.DeleteFunc(m.Placeholders, func(h Placeholder) bool { return goneBeneath(h.Path) })
	for _, list := range m.mountedOn() {
		*list = slices.DeleteFunc(*list, goneBeneath)
	}
}

// mountedOn are m's lists of the paths the child mounts on (Apply), and
// Unpinned, which names paths of ReadOnly.
func (m *MountPlan) mountedOn() []*[]string {
	return []*[]string{&m.ReadOnly, &m.Pinned, &m.PinnedLinks, &m.Unpinned, &m.Hidden, &m.HiddenFiles, &m.HiddenSockets, &m.Unreadable}
}

// literalHead is the glob g's leading components with no wildcard, and
// whether it names a folder: more of g follows, or g ends with "/".
func literalHead(g string) (head string, dir bool) {
	parts := strings.Split(strings.TrimSuffix(g, "/"), "/")
	n := 0
	for n < len(parts) && parts[n] != "" && !strings.ContainsAny(parts[n], "*?[{\\") && parts[n] != "." && parts[n] != ".." {
		n++
	}
	if n == 0 {
		return "", false
	}
	return filepath.Join(parts[:n]...), n < len(parts) || strings.HasSuffix(g, "/")
}

// firstMissing is the placeholder of the missing canonical path c: its
// first component that does not exist, a folder unless it is c itself
// and c is not one; ok is false where the last existing one is not a
// folder.
func firstMissing(c string, dir bool) (Placeholder, bool) {
	at := c
	for {
		parent := filepath.Dir(at)
		fi, err := os.Lstat(parent)
		if err == nil {
			if !fi.IsDir() {
				return Placeholder{}, false
			}
			return Placeholder{Path: at, Dir: at != c || dir}, true
		}
		if parent == at {
			return Placeholder{}, false
		}
		at = parent
	}
}

// dropPlaceholders takes the placeholders at paths, which could not be
// made, out of m: nothing is there to bind.
func (m *MountPlan) dropPlaceholders(paths []string) {
	if len(paths) == 0 {
		return
	}
	m.Placeholders = slices.DeleteFunc(m.Placeholders, func(h Placeholder) bool { return slices.Contains(paths, h.Path) })
	m.ReadOnly = slices.DeleteFunc(m.ReadOnly, func(p string) bool { return slices.Contains(paths, p) })
}
