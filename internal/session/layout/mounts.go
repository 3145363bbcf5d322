package layout

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// A MountPlan is planned once, from what exists when the session starts: a
// protected or deny_read path created later is guarded by the fence for
// the file tool and by Landlock's roots for the shell, not by a mount.

// MountPlan is the mount layer of a dsh-fs exec session (docs/design.md,
// the exec section): what the session's shell may neither write nor read
// although Landlock alone would let it. Landlock grants a writable root
// whole and cannot carve a protected folder (.git) out of it, nor deny
// reads the fence denies by name, nor govern metadata (chmod, chown,
// utime, xattrs, inode flags) anywhere; the shell's child covers those
// paths, and makes everything outside the roots read-only, with mounts
// in its own private mount namespace, which no other process sees and
// which ends with the session.
type MountPlan struct {
	// Files is what the session's child applies (internal/session/plan):
	// the paths bound read-only, hidden and pinned, the read-only tree,
	// the overlays, the read view and the runtime folder. Each list holds
	// canonical paths that exist now, sorted, once each.
	plan.Files
	// SocketsLeft are the sockets of the kernel's list that are not
	// covered, each "PATH (why)" (socketAt); SocketsUnread says why the
	// list could not be read, when it could not (no socket is hidden).
	SocketsLeft   []string `json:"sockets_left,omitempty"`
	SocketsUnread string   `json:"sockets_unread,omitempty"`
	// Unreadable are the canonical folders of the writable roots that
	// the supervisor could not read: what they hold is unknown, so each
	// is hidden like a deny_read folder (it is in Hidden too) rather than
	// read as empty.
	Unreadable []string `json:"unreadable,omitempty"`
	// Partial names each folder whose walk stopped at the budget, so what
	// lies beyond was not looked at: the literal folder of an absolute
	// deny_read glob with wildcards, a git directory no tree index holds
	// (in a root of origin tmp, reached by a .git pointer) with more than
	// gitPartsBudget entries in its worktrees or modules, or a folder of
	// a root that could not be read but holds a config file, which is
	// never hidden. No budget puts a writable root in it: roots are read
	// whole, through the tree index.
	Partial []string `json:"partial,omitempty"`
	// Unpinned are the paths of ReadOnly whose folders are not pinned,
	// for want of budget (planOptions.maxPinned).
	Unpinned []string `json:"unpinned,omitempty"`
	// DenyIdentities are the identities of the deny_read files with
	// several links, seen before anything is hidden. The session record
	// carries them (wire.Record), not the plan.
	DenyIdentities []policy.DenyIdentity `json:"-"`
	// Indexes are the writable roots' tree indexes as the plan read them,
	// and IndexStore where they are kept (nil: nowhere), when the plan
	// was made by PlanMountsForSession: the supervisor saves them once
	// CMD has started (SaveIndexes), and the git guard checks them again
	// when CMD has ended. Never in the record.
	Indexes    []*treeindex.Index `json:"-"`
	IndexStore *treeindex.Store   `json:"-"`
	// Placeholders hold protected paths missing at the start; they and
	// the targets of protected symlinks are in ReadOnly (placeholders.go).
	Placeholders []Placeholder `json:"placeholders,omitempty"`
	// edges are the protected paths planProtectedEdges looked at, for
	// RefreshPlaceholders. Never in the record.
	edges []protectedEdge
}

// SaveIndexes saves each of m's Indexes that differs from what its
// store holds: the folders the plan read and the notes it made. A store
// that cannot be written costs the next plan its reads, never its
// correctness.
func (m *MountPlan) SaveIndexes() {
	for _, ix := range m.Indexes {
		m.IndexStore.Sync(ix)
	}
}

// planOptions bound one plan's walks and pins, and give it the kernel's
// list of bound sockets. A session is planned with sessionOptions; this
// package's tests lower a bound, or keep the machine's sockets out, on a
// plan of their own.
type planOptions struct {
	// walkBudget bounds the entries one walk looks at: the folder of an
	// absolute deny_read glob. Past the budget the walk stops and says so
	// in Partial. The writable roots are not walked: they are read
	// through their tree index (treeindex), whole.
	walkBudget int
	// identityBudget is the budget of the walk of the anchored deny_read
	// trees for identities, the fence's.
	identityBudget int
	// maxPinned bounds the folders a plan pins: each is a mount, made as
	// the session starts. A workspace holding many nested repositories
	// pins the folders above the first ones, in name order, and lists
	// the rest in Unpinned.
	maxPinned int
	// boundSockets is the kernel's list of the pathname unix sockets
	// bound in this process's network namespace, each path as it was
	// bound (readBoundSockets).
	boundSockets func() ([]string, error)
	// watch are the names the roots' tree indexes say each folder holds
	// or not (treeindex.Scan), for the git guard, which reads them
	// again at the end: the supervisor's (gitguard.IndexWatch).
	watch []string
}

// sessionOptions are the options a session's plan is made with.
func sessionOptions() planOptions {
	return planOptions{walkBudget: 20000, identityBudget: sandbox.MaxIdentityEntries, maxPinned: 256, boundSockets: readBoundSockets}
}

// PlanMounts finds what the mount layer covers under policy p with the
// given canonical writable roots. It never follows a symlink while
// walking, and lists only paths that exist now, canonical, sorted and
// once each.
func PlanMounts(p policy.Policy, roots []sandbox.Root) MountPlan {
	// Protected globs are matched as the fence matches them (pathmatch.Covers on
	// the path relative to the root, or on the canonical path for an
	// absolute glob), and so are deny_read globs ("~" expanded from p.Home,
	// a relative glob anchored with "**/"), so the shell and the file tool
	// agree on what they guard. A folder a glob covers is listed itself and
	// not descended into; a folder holding a git directory's HEAD, objects
	// and refs (or commondir) is protected whatever its name, as the fence's
	// pathmatch.InsideGitDir does. A deny_read match wins over a protected one: a
	// secret that is also protected must not be readable.
	//
	// What no walk looks at is left to the fence, which the shell does not
	// pass through: a relative deny_read glob ("**/.env") is looked for
	// only inside the writable roots walked, not elsewhere on disk (Landlock
	// leaves reads open), and not inside a folder already bound read-only.
	//
	// The read-only tree is planned where the kernel has mount_setattr
	// (OutsideReadOnly), with the roots of p's kernel layer as Writable (in
	// workspace-write mode; none otherwise); the folders above each
	// read-only path in a root are Pinned (planPins). A regular file with
	// several links that a root's walk meets is hidden when it is the same
	// file as a deny_read file: one in an anchored glob's tree
	// (sandbox.Fence.DenyIdentities, before anything is hidden) or one the walk hides;
	// those identities are DenyIdentities.
	//
	// Each writable root is read whole, with no budget: what one session
	// leaves behind (twenty thousand files before a nested .git) never
	// decides what the next one protects. Its folders come from its tree
	// index (treeindex.Scan, saved with Store.Sync), kept in store between sessions and checked
	// folder by folder against their ctimes before use; nil store reads each
	// root whole every time. A folder the supervisor cannot read is hidden
	// and listed in Unreadable, never taken as empty.
	//
	// Roots whose origin is "tmp" are not read: /tmp and os.TempDir() are
	// shared scratch space whose size no session bounds, and nothing the
	// default protected list names belongs there. The reads do cross into
	// other file systems mounted beneath a root: a .git on a bind-mounted
	// folder is as writable as any other.
	return sessionOptions().planIndexed(p, roots, nil)
}

// planIndexed is PlanMounts with the options o and the roots' tree
// indexes kept in store (nil: none kept), saved before it returns.
func (o planOptions) planIndexed(p policy.Policy, roots []sandbox.Root, store *treeindex.Store) MountPlan {
	m := o.plan(p, roots, store)
	m.SaveIndexes()
	m.Indexes, m.IndexStore = nil, nil
	return m
}

// PlanMountsForSession is PlanMounts with the roots' tree indexes kept
// in store (nil: none kept), watching the names of watch, but not saved:
// they are left in the plan's Indexes, for the caller to save when
// nothing waits on it (SaveIndexes), after CMD has started.
func PlanMountsForSession(p policy.Policy, roots []sandbox.Root, store *treeindex.Store, watch []string) MountPlan {
	o := sessionOptions()
	o.watch = watch
	return o.plan(p, roots, store)
}

// plan is PlanMountsForSession with the options o.
func (o planOptions) plan(p policy.Policy, roots []sandbox.Root, store *treeindex.Store) MountPlan {
	pl := planner{planOptions: o, ro: map[string]bool{}, hidden: map[string]bool{}, hiddenFiles: map[string]bool{},
		denyIDs: map[fileID]string{}, unreadable: map[string]bool{}}
	for _, g := range p.Protected {
		g = p.ExpandHome(g)
		switch {
		case strings.HasPrefix(g, "~"):
			continue // no home: it names nothing, as in the fence
		case strings.HasPrefix(g, "/"):
			pl.absProtected = append(pl.absProtected, newWalkGlob(g))
		default:
			pl.protected = append(pl.protected, newWalkGlob(g))
		}
		pl.protectedGlobs = append(pl.protectedGlobs, g)
	}
	var absDeny []string
	fence := sandbox.NewFence(p)
	pl.deny = fence.DenyMatcher()
	pl.denyMatch, pl.denyShown = fence.DenyReadGlobs()
	for _, g := range pl.denyMatch {
		if strings.HasPrefix(g, "/") {
			absDeny = append(absDeny, g)
		}
	}
	if len(absDeny) > 0 {
		// Before anything is hidden: inside the session the hidden
		// files are out of the file tool's reach, identities included.
		ids, cut := fence.DenyIdentities(o.identityBudget)
		for _, id := range ids {
			pl.denyIDs[fileID{id.Dev, id.Ino}] = id.Glob
		}
		pl.idsCut = cut
	}
	rootPaths := sandbox.RootPaths(roots)
	for _, file := range append(slices.Clip(p.TrustedFiles), p.ConfigFiles...) {
		c, err := sandbox.Canonical(p.Cwd, file)
		if err != nil {
			continue
		}
		pl.config = append(pl.config, c)
		if pathmatch.BeneathAny(rootPaths, c) {
			pl.addExisting(c, pl.ro, pl.ro)
		}
	}
	for _, r := range roots {
		var ix *treeindex.Index
		if r.Origin != "tmp" {
			ix = treeindex.Scan(r.Path, store.Load(r.Path), o.watch...)
			// Before the session: ctimes moved without a listing (a
			// chmod -R since the last session) are settled and saved.
			// The git guard's end scan does not settle: it judges what
			// changed during the session by the ctimes kept here.
			ix.Settle()
			pl.indexes = append(pl.indexes, ix)
		}
		for _, g := range sandbox.GitPointerTargets(r.Path) {
			if pathmatch.BeneathAny(rootPaths, g) && pathmatch.IsGitDir(g) {
				pl.addGitDir(g)
			}
		}
		if ix != nil {
			pl.walkIndex(ix)
		}
	}
	seen := map[string]bool{}
	for _, g := range absDeny {
		pl.planAbsDeny(g, seen)
	}
	pl.planSockets(p)
	pl.hideLinks()
	m := pl.plan()
	m.Indexes, m.IndexStore = pl.indexes, store
	m.addProtectedEdges(p, roots) // before the pins, which hold them too
	if p.Mode == policy.WorkspaceWrite {
		m.Writable = sandbox.ExistingDirs(rootPaths)
		slices.Sort(m.Writable)
	}
	m.Writable = nonNil(m.Writable)
	m.OutsideReadOnly = readOnlyTreeWhy() == ""
	if !m.OutsideReadOnly || p.Mode == policy.WorkspaceWrite {
		// Under a read-only tree in read-only mode nothing can be
		// renamed anyway.
		// A git directory is pinned itself, its HEAD standing for it:
		// with its data writable, moving it aside would let a new one
		// with a planted config be put in its place.
		// Protected paths' symlinks: their folders, as a path's.
		pins := slices.Concat(m.ReadOnly, m.PinnedLinks)
		for _, g := range sortedKeys(pl.gitDirs) {
			pins = append(pins, filepath.Join(g, "HEAD"))
		}
		m.Pinned, m.Unpinned = planPins(pins, rootPaths, m.OutsideReadOnly, o.maxPinned)
		for i, p := range m.Unpinned {
			if g := filepath.Dir(p); pl.gitDirs[g] && !pl.ro[p] {
				m.Unpinned[i] = g // the git directory, not its HEAD
			}
		}
	}
	m.Pinned = nonNil(m.Pinned)
	return m
}

type planner struct {
	planOptions
	protected      []walkGlob         // protected globs relative to a root
	protectedGlobs []string           // every protected glob, "~" expanded
	absProtected   []walkGlob         // absolute protected globs
	deny           *pathmatch.Matcher // deny_read globs, anchored, as the fence has them
	denyShown      []string           // the glob to name for each of deny, in a denial
	denyMatch      []string           // each of deny as the fence matches it
	config         []string           // canonical trusted and loaded config files

	ro, hidden, hiddenFiles map[string]bool
	unreadable              map[string]bool    // hidden for want of a read (walkIndex)
	indexes                 []*treeindex.Index // the roots' tree indexes, read whole
	gitDirs                 map[string]bool    // the git directories met, pinned (addGitDir)
	sockets                 map[string]bool    // bound at the start, to hide (sockets.go)
	socketsLeft             []string           // bound, not covered: "PATH (why)"
	socketsUnread           string             // why the kernel's list was not read
	partial                 []string

	// visited are the folders of the roots' indexes whose entries the
	// plan went through, and denyIDs the identities of the deny_read
	// files with several links, each with its glob: a regular file of a
	// visited folder that is one of them is hidden like it (hideLinks).
	visited []visitedFolder
	denyIDs map[fileID]string
	// idsCut is the anchored glob whose tree was too large to collect
	// every identity in (sandbox.Fence.DenyIdentities); "" when none was.
	idsCut string
}

// walkGlob is a glob split once for a walk that matches it against
// every entry, with the literal components any path it covers holds.
type walkGlob struct {
	parts    []string
	literals []string
}

func newWalkGlob(g string) walkGlob {
	w := walkGlob{parts: pathmatch.Components(g)}
	for _, p := range w.parts {
		if !strings.ContainsAny(p, "*?[\\") {
			w.literals = append(w.literals, p)
		}
	}
	return w
}

// covers is pathmatch.Covers on a name already split. A name lacking one of
// the glob's literal components is not covered; path.Match, which the
// "**" of a glob would otherwise call at every depth, is spared.
func (w walkGlob) covers(name []string) bool {
	for _, l := range w.literals {
		if !slices.Contains(name, l) {
			return false
		}
	}
	return pathmatch.CoverParts(w.parts, name)
}

// visitedFolder is a folder of a root's index that the plan went into.
type visitedFolder struct {
	dir string
	f   *treeindex.Folder
}

// noteDenied records the identity of the regular file abs, which the
// glob denyShown[denied] covers, when it has several links: its other
// names are to be hidden too.
func (pl *planner) noteDenied(abs string, denied int) {
	if id, ok := linkedID(abs); ok {
		if _, seen := pl.denyIDs[id]; !seen {
			pl.denyIDs[id] = pl.denyShown[denied]
		}
	}
}

// fileID is a file's identity (device and inode).
type fileID struct{ dev, ino uint64 }

// hideLinks hides every regular file of the folders the plan went into
// that is the same file as a deny_read file: a hard link made before the
// session reads the secret under a name no glob covers. A file is looked
// at only when its inode number (from its folder's listing) is one of a
// deny_read file with several links, so a workspace pays no stat per
// file, and the listings are gone through only when there is such a
// file. It is never taken from a folder's note: a new link to a secret
// made from another folder moves no ctime of the folder it lies in.
func (pl *planner) hideLinks() {
	// When the identities of an anchored glob's tree
	// could not all be collected (idsCut), the glob's literal folder is
	// listed in Partial: the fence outside denies every file with several
	// links then, but hiding them all would cover each hard-linked file of
	// a workspace (a pnpm store, a git clone --local) with a mount.
	if len(pl.denyIDs) > 0 {
		inos := map[uint64]bool{}
		for id := range pl.denyIDs {
			inos[id.ino] = true
		}
		for _, v := range pl.visited {
			pl.hideLinksIn(v, inos)
		}
	}
	if pl.idsCut == "" {
		return
	}
	for i, shown := range pl.denyShown {
		if shown != pl.idsCut || !strings.HasPrefix(pl.denyMatch[i], "/") {
			continue
		}
		prefix, _ := pathmatch.LiteralPrefix(pl.denyMatch[i])
		if c, err := sandbox.Canonical("/", prefix); err == nil {
			pl.partial = append(pl.partial, c)
			return
		}
	}
}

// visitDeny returns the visitor of the walk for the absolute deny_read
// glob g (canonical), pruned to what g may cover.
func (pl *planner) visitDeny(g string) func(abs string, typ fs.FileMode) bool {
	pat := pathmatch.Components(g)
	return func(abs string, typ fs.FileMode) bool {
		if pathmatch.Covers(g, abs) {
			return !pl.hide(abs, typ)
		}
		return pathmatch.MayCover(pat, pathmatch.Components(abs))
	}
}

// hide records abs, which a deny_read glob covers, as hidden, and
// reports whether it did. It never hides a config file or a folder
// holding one: a session may add deny_read globs, and hiding the trusted
// config from the dsh-fs the shell runs would hand that dsh-fs the
// defaults instead of the trusted policy (the fence still denies reading
// it by name). Such a folder is walked into instead, and what it holds
// besides is hidden entry by entry.
func (pl *planner) hide(abs string, typ fs.FileMode) bool {
	if !pl.mayHide(abs) {
		return false
	}
	if typ.IsDir() {
		pl.hidden[abs] = true
	} else {
		pl.hiddenFiles[abs] = true
	}
	return true
}

// mayHide reports whether abs may be hidden: it is no config file and
// holds none (hide).
func (pl *planner) mayHide(abs string) bool {
	return !slices.ContainsFunc(pl.config, func(c string) bool { return sandbox.Beneath(abs, c) })
}

func (pl *planner) protectedPath(rel, abs string) bool {
	// As in the fence, a relative glob never names the root itself.
	if rel != "." {
		relParts := pathmatch.Components(rel)
		for _, g := range pl.protected {
			if g.covers(relParts) {
				return true
			}
		}
	}
	if len(pl.absProtected) == 0 {
		return false
	}
	absParts := pathmatch.Components(abs)
	for _, g := range pl.absProtected {
		if g.covers(absParts) {
			return true
		}
	}
	return false
}

// addGitDir records the git directory dir: its protected parts, and
// those of the git directories nested in it, are bound read-only
// (pathmatch.ProtectedGitParts), the rest of it stays writable, and the git directories
// are pinned. A walk cut short by the budget is listed in Partial.
func (pl *planner) addGitDir(dir string) {
	if pl.gitDirs == nil {
		pl.gitDirs = map[string]bool{}
	}
	parts, dirs, ok := pathmatch.ProtectedGitParts(dir, pl.gitList(dir))
	for _, p := range parts {
		pl.ro[p] = true
	}
	for _, g := range dirs {
		pl.gitDirs[g] = true
	}
	if !ok {
		pl.partial = append(pl.partial, dir)
	}
}

// addExisting records the canonical path c in dirs or files by what it
// is, when it exists and is a folder or a regular file.
func (pl *planner) addExisting(c string, dirs, files map[string]bool) {
	fi, err := os.Lstat(c)
	switch {
	case err != nil:
	case fi.IsDir():
		dirs[c] = true
	case fi.Mode().IsRegular():
		files[c] = true
	}
}

// planAbsDeny finds what the absolute deny_read glob g covers outside the
// walks of the roots. A glob without wildcards, or whose only wildcard is
// a final "/**", names one path: its literal part, hidden whole. Any
// other is matched by a walk from its literal folder, pruned to what the
// glob may cover and bounded by walkBudget like a root's walk; a glob such as
// "/**/id_rsa" thus looks at the first walkBudget entries of / and
// reports "/" in Partial. doublestar's FilepathGlob is not used: it has
// no bound. seen holds the globs already planned, by their canonical
// spelling: the fence lists a glob with a symlinked prefix twice.
func (pl *planner) planAbsDeny(g string, seen map[string]bool) {
	prefix, rest := pathmatch.LiteralPrefix(g)
	if prefix == "" {
		prefix = "/"
	}
	c, err := sandbox.Canonical("/", prefix)
	if err != nil {
		return
	}
	g = strings.TrimSuffix(c, "/") + "/" + strings.Join(rest, "/")
	if seen[g] {
		return
	}
	seen[g] = true
	fi, err := os.Lstat(c)
	switch {
	case err != nil:
	case fi.Mode().IsRegular():
		if pathmatch.Covers(g, c) {
			pl.hide(c, 0)
		}
	case fi.IsDir():
		// A glob that names this one folder is done at its top, unless
		// it holds a config file.
		if !pl.walk(c, pl.visitDeny(g)) {
			pl.partial = append(pl.partial, c)
		}
	}
}

// walk visits the folder top and what lies beneath it, depth first,
// without following symlinks, until walkBudget entries have been looked
// at; it reports whether it saw everything. visit is called on each
// folder (typ fs.ModeDir) and regular file (typ 0) and returns whether to
// walk into a folder. It walks the folder of an absolute deny_read glob;
// the mount plan reads the roots through their tree index instead
// (walkIndex).
func (pl *planner) walk(top string, visit func(abs string, typ fs.FileMode) bool) bool {
	// A symlink is never visited: mount(2) follows it, so covering a link
	// would cover whatever the session points it at, outside the root or
	// swapped after the plan. What it leads to is met by a walk under its
	// own name when it lies in a root, and lies outside Landlock's writable
	// roots otherwise. Sockets are the kernel's list's (sockets.go), not the
	// walk's; fifos and devices are left alone.
	if !visit(top, fs.ModeDir) {
		return true
	}
	seen := 0
	stack := []string{top}
	for len(stack) > 0 {
		dir := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, ok := pathmatch.ReadDirBounded(dir, pl.walkBudget-seen)
		seen += len(entries)
		if !ok {
			return false
		}
		// Sorted, and pushed in reverse, so the walk goes in name order
		// and a partial walk stops at the same place every time.
		slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
		for i := len(entries) - 1; i >= 0; i-- {
			e := entries[i]
			abs := filepath.Join(dir, e.Name())
			switch t := e.Type(); {
			case t.IsDir():
				if visit(abs, fs.ModeDir) {
					stack = append(stack, abs)
				}
			case t.IsRegular():
				visit(abs, 0)
			}
		}
	}
	return true
}

// plan returns what pl found, sorted, each path once, without what a
// hidden folder or a read-only folder already covers.
func (pl *planner) plan() MountPlan {
	hidden := sortedKeys(pl.hidden)
	under := func(p string, dirs []string) bool {
		for _, d := range dirs {
			if d != p && sandbox.Beneath(d, p) {
				return true
			}
		}
		return false
	}
	var m MountPlan
	for _, h := range hidden {
		if !under(h, hidden) {
			m.Hidden = append(m.Hidden, h)
		}
	}
	for _, f := range sortedKeys(pl.hiddenFiles) {
		if !under(f, m.Hidden) {
			m.HiddenFiles = append(m.HiddenFiles, f)
		}
	}
	for _, r := range sortedKeys(pl.ro) {
		// Hiding wins: a secret that is also protected stays unreadable.
		if !pl.hidden[r] && !pl.hiddenFiles[r] && !under(r, m.Hidden) && !under(r, m.ReadOnly) {
			m.ReadOnly = append(m.ReadOnly, r)
		}
	}
	m.ReadOnly = nonNil(m.ReadOnly)
	m.Hidden = nonNil(m.Hidden)
	m.HiddenFiles = nonNil(m.HiddenFiles)
	m.HiddenSockets = []string{}
	for _, sock := range sortedKeys(pl.sockets) {
		if !under(sock, m.Hidden) {
			m.HiddenSockets = append(m.HiddenSockets, sock)
		}
	}
	m.SocketsLeft, m.SocketsUnread = pl.socketsLeft, pl.socketsUnread
	for _, u := range sortedKeys(pl.unreadable) {
		if !under(u, m.Hidden) {
			m.Unreadable = append(m.Unreadable, u)
		}
	}
	if len(pl.partial) > 0 {
		m.Partial = slices.Compact(slices.Sorted(slices.Values(pl.partial)))
	}
	m.DenyIdentities = denyIdentities(pl.denyIDs)
	return m
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// nonNil keeps an empty list a JSON [], not null.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
