package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// Target is a path the fence has resolved.
type Target struct {
	// Given is the path as the caller wrote it.
	Given string
	// Path is the canonical absolute path (see Canonical).
	Path string
	// root is the canonical writable root that contains Path, once
	// CheckWrite has passed in workspace-write mode; "" otherwise. It is
	// the fence's to fill in: openDir decides again and never trusts it
	// from a caller (IsRoot and SameRoot tell what callers need of it).
	root string
	// rel is Path relative to root ("." for the root itself).
	rel string
	// name says Path names the last name as written, a final symlink
	// not followed (ResolveName): the open resolves it again the same
	// way.
	name bool
}

// IsRoot reports whether t, passed by CheckWrite, is a writable root
// itself.
func (t Target) IsRoot() bool { return t.root != "" && t.rel == "." }

// SameRoot reports whether t and u, each passed by CheckWrite, lie in the
// same writable root.
func (t Target) SameRoot(u Target) bool { return t.root != "" && t.root == u.root }

// Fence applies one Policy to the paths of one call. It is not safe for
// concurrent use.
type Fence struct {
	policy    policy.Policy
	mode      policy.Mode
	escalated bool
	enforced  bool // the kernel layer is in place

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
	denyIdx    denyIndex  // denyRead compiled (denyMatcher)
	// sessionIDs are the policy's DenyIdentities by identity, made on
	// first use.
	sessionIDs struct {
		once sync.Once
		ids  map[fileID]string
	}
}

// NewFence returns the fence of policy p.
func NewFence(p policy.Policy) *Fence {
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

// literalPrefix splits a glob at its first component with a wildcard:
// the literal folders before it, joined ("" for none), and the
// components from it on.
func literalPrefix(g string) (prefix string, rest []string) {
	parts := strings.Split(g, "/")
	n := 0
	for n < len(parts) && !strings.ContainsAny(parts[n], "*?[\\") {
		n++
	}
	return strings.Join(parts[:n], "/"), parts[n:]
}

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
// git directory is protected (gitProtectedIn).
func (f *Fence) loadAbsProtected() {
	for _, file := range append(slices.Clip(f.policy.TrustedFiles), f.policy.ConfigFiles...) {
		if c, err := Canonical(f.policy.Cwd, file); err == nil {
			f.absProtected = append(f.absProtected, c)
		}
	}
	for _, r := range f.roots {
		f.gitPointed = append(f.gitPointed, gitPointerTargets(r.Path)...)
	}
}

// gitPointerTargets returns, canonical, the git folders the ".git" at the
// top of root leads to when it is not the repository itself: the gitdir a
// ".git" pointer file names (a worktree's or submodule's real git folder)
// and, for a worktree, the repository its commondir names; or the target
// of a ".git" symlink.
func gitPointerTargets(root string) []string {
	var out []string
	dotgit := filepath.Join(root, ".git")
	if gitdir, ok := readGitdir(dotgit); ok {
		if c, err := Canonical(root, gitdir); err == nil {
			out = append(out, c)
			// A worktree's gitdir names, in commondir, the repository
			// whose hooks and config git uses for it.
			if common, ok := readCommondir(c); ok {
				if cc, err := Canonical(c, common); err == nil {
					out = append(out, cc)
				}
			}
		}
	} else if c, err := Canonical(root, ".git"); err == nil && c != dotgit {
		// .git is a symlink: its target is the repository.
		out = append(out, c)
	}
	return out
}

// Resolve canonicalizes path against the session cwd.
func (f *Fence) Resolve(path string) (Target, error) {
	canon, err := Canonical(f.policy.Base(), path)
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
	trimmed := strings.TrimRight(path, "/")
	dir, name := filepath.Split(trimmed)
	if name == "" || name == "." || name == ".." || trimmed != path {
		return f.Resolve(path)
	}
	if dir == "" {
		dir = "."
	}
	canon, err := Canonical(f.policy.Base(), dir)
	if err != nil {
		return Target{Given: path}, err
	}
	return Target{Given: path, Path: filepath.Join(canon, name), name: true}, nil
}

// CheckRead denies reading t when it matches a deny_read glob, in every
// mode. Both the canonical path and the path as written (made absolute,
// cleaned) are tested, so neither a symlink into a secret folder nor a
// symlinked secret folder reads what the list forbids. It decides on
// names only, before anything is opened: a read then opens through
// OpenRead, Lstat or OpenList, which check what they opened.
func (f *Fence) CheckRead(op string, t Target) error {
	if g, ok := f.deniedRead(t); ok {
		return f.readDenied(op, t, g)
	}
	return nil
}

// ReadDenied reports whether the canonical path is under a deny_read glob
// (or is a folder such a glob names, or lies beneath one).
// ls uses it to leave such entries out of a listing.
func (f *Fence) ReadDenied(canonical string) bool {
	_, ok := f.deniedRead(Target{Given: canonical, Path: canonical})
	return ok
}

// deniedRead returns the glob that denies reading t, by name: a glob that
// matches t's canonical path or its path as written, or a folder above
// either (a folder entry covers everything beneath it).
func (f *Fence) deniedRead(t Target) (string, bool) {
	if len(f.denyRead) == 0 {
		return "", false
	}
	lexical := t.Given
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(f.policy.Base(), lexical)
	}
	lexical = filepath.Clean(lexical)
	m := f.denyMatcher()
	i := m.first(t.Path)
	if lexical != t.Path {
		if j := m.first(lexical); j >= 0 && (i < 0 || j < i) {
			i = j
		}
	}
	if i < 0 {
		return "", false
	}
	return f.denyRead[i].shown, true
}

// CheckWrite decides whether t may be mutated under the effective mode, and
// on success in workspace-write mode fills in t.root and t.rel for the
// confined handle. A denial is a *DeniedError; an escalation asked for
// in this call is Escalate's to decide, with a preview of the change.
func (f *Fence) CheckWrite(op string, t *Target) error {
	reason, matched, needed := f.writeVerdict(t)
	if reason == "" {
		return f.checkApproved(op, *t)
	}
	return f.denial(op, *t, reason, matched, needed)
}

// denial is the denial of op on t under the fence's mode, with the
// narrowest mode that would allow it ("" when none would) and what the
// model needs to recover: the writable roots and how to escalate.
func (f *Fence) denial(op string, t Target, reason, matched string, needed policy.Mode) *policy.DeniedError {
	roots, _ := f.Roots()
	d := &policy.DeniedError{Op: op, Path: t.Given, Resolved: t.Path, Base: f.policy.Base(), Mode: f.mode, Reason: reason, Matched: matched,
		WritableRoots: RootPaths(roots), Needed: needed, MaxMode: f.policy.MaxMode, Approval: f.policy.Approval}
	for _, r := range roots {
		if r.Origin == "cwd" {
			d.Workspace = r.Path
			break
		}
	}
	return d
}

// Preview is what an approver is shown of a denied change: the bounded
// diff, as a result's "diff" object and as text.
type Preview struct {
	Diff any
	Text string
	// Paths are every path the change touches; none for a change of the
	// denied target alone.
	Paths []policy.EscalationPath
}

// AsksApprover reports whether Escalate would put err to a person or a
// command, who should then see a preview of the change: the call asked to
// escalate, the escalation would allow it, and the approval is neither
// trust nor never.
func (f *Fence) AsksApprover(err error) bool {
	var denied *policy.DeniedError
	if !errors.As(err, &denied) || f.approver.To == "" || f.escalated || f.approver.Elsewhere || f.escalationRefusal(denied) != "" {
		return false
	}
	switch f.policy.Approval {
	case policy.ApprovalTTY, policy.ApprovalCommand:
		return f.approver.NoGrant == ""
	case policy.ApprovalSupervisor:
		return f.approver.NoGrant == "" && f.approver.Supervisor != nil
	}
	return false
}

// Escalate decides, once per call, whether the escalation asked for with
// --escalate lifts err, a denial CheckWrite returned for t: the mode it
// asks for must allow the change and be within max_mode, and the policy's
// approver must approve it, shown preview. Granted, the fence's mode
// widens for the rest of this call and t is checked again; refused, the
// denial comes back with reason ReasonNotApproved and the refusal. Any
// other error, or no escalation asked for, comes back as it is.
func (f *Fence) Escalate(err error, t *Target, preview Preview) error {
	var denied *policy.DeniedError
	if !errors.As(err, &denied) || f.approver.To == "" || f.escalated {
		return err
	}
	if refusal := f.escalationRefusal(denied); refusal != "" {
		denied.Refusal = refusal
		return denied
	}
	if f.approver.Elsewhere {
		return &policy.ElsewhereError{Denied: denied, To: f.approver.To}
	}
	req := policy.EscalationRequest{Kind: policy.KindFile, Op: denied.Op, Path: t.Given, Resolved: t.Path, Reason: denied.Reason,
		Matched: denied.Matched, From: f.mode, To: f.approver.To, Paths: requestPaths(denied.Op, t, preview), EscalationContext: f.approver.Context,
		Diff: preview.Diff, DiffText: preview.Text}
	if err := f.approve(req); err != nil {
		denied.Cause, denied.Reason = denied.Reason, policy.ReasonNotApproved
		denied.Refusal = err.Error()
		return denied
	}
	f.mode, f.escalated = f.approver.To, true
	f.recordApproved(req)
	return f.CheckWrite(denied.Op, t)
}

// escalationRefusal says why the escalation asked for cannot lift denied
// whoever approves it, or "" when it could.
func (f *Fence) escalationRefusal(denied *policy.DeniedError) string {
	switch {
	case !f.approver.To.Wider(f.mode) || denied.Needed == "" || denied.Needed.Wider(f.approver.To):
		return fmt.Sprintf("--escalate %s would not allow it", f.approver.To)
	case f.approver.To.Wider(f.policy.MaxMode):
		return fmt.Sprintf("escalation to %s refused: %s %s", f.approver.To, policy.ReasonAboveMaxMode, f.policy.MaxMode)
	}
	return ""
}

// Verdict is the fence's answer on a mutation of a path, for a caller
// that explains it (stat): Reason is "" when it would pass, or one of the
// Reason constants, with what it matched and the narrowest mode that
// would allow it.
type Verdict struct {
	Reason  string
	Matched string
	Needed  policy.Mode
}

// WriteVerdict decides on a mutation of t by name, as CheckWrite does,
// without a denial and without escalating.
func (f *Fence) WriteVerdict(t Target) Verdict {
	reason, matched, needed := f.writeVerdict(&t)
	return Verdict{Reason: reason, Matched: matched, Needed: needed}
}

// writeVerdict returns "" when t may be mutated in the effective mode, or
// the reason it may not, what it matched, and the narrowest mode that would
// allow it.
func (f *Fence) writeVerdict(t *Target) (reason, matched string, needed policy.Mode) {
	switch f.mode {
	case policy.DangerFullAccess:
		return "", "", ""
	case policy.ReadOnly:
		if r, _, _ := f.workspaceVerdict(&Target{Given: t.Given, Path: t.Path}); r == "" {
			return policy.ReasonReadOnly, "", policy.WorkspaceWrite
		}
		return policy.ReasonReadOnly, "", policy.DangerFullAccess
	}
	return f.workspaceVerdict(t)
}

func (f *Fence) workspaceVerdict(t *Target) (reason, matched string, needed policy.Mode) {
	roots, err := f.Roots()
	if err != nil {
		return policy.ReasonOutsideRoots, "", policy.DangerFullAccess
	}
	written := f.asWritten(t.Given)
	var root, rel string
	for i, r := range roots {
		r := r.Path
		inRel, ok := within(r, t.Path)
		if !ok {
			inRel, ok = f.identityWithin(i, t.Path)
		}
		if !ok {
			continue
		}
		if g, hit := f.protectedIn(inRel, t.Path); hit {
			return policy.ReasonProtected, g, policy.DangerFullAccess
		}
		// The path as written may name a protected folder through a
		// symlink (.vscode => editor): that spelling is protected too.
		if wRel, ok := within(r, written); ok {
			if g, hit := f.protectedIn(wRel, written); hit {
				return policy.ReasonProtected, g, policy.DangerFullAccess
			}
			if dotgit, hit := gitProtectedByName(wRel); hit && wRel != "." {
				return policy.ReasonProtected, filepath.Join(r, dotgit), policy.DangerFullAccess
			}
		}
		if dir, hit := gitProtectedIn(inRel, t.Path, f.gitPointed); hit {
			return policy.ReasonProtected, dir, policy.DangerFullAccess
		}
		if completesGitDir(r, inRel) {
			return policy.ReasonBareRepo, "", policy.DangerFullAccess
		}
		// The innermost root confines the handle most tightly; roots
		// nest rarely, so keep the longest match.
		if root == "" || len(r) > len(root) {
			root, rel = r, inRel
		}
	}
	if root == "" {
		// Beneath a session cwd the trusted policy refused as a
		// workspace, say so: "outside writable roots" would leave the
		// model guessing why its own folder is not writable.
		for _, r := range f.refused {
			if _, ok := within(r.Path, t.Path); ok && r.Origin == "cwd" {
				return r.Reason, r.Matched, policy.DangerFullAccess
			}
		}
		return policy.ReasonOutsideRoots, "", policy.DangerFullAccess
	}
	t.root, t.rel = root, rel
	return "", "", ""
}

// asWritten is the path as the caller wrote it, made absolute against the
// session cwd and cleaned lexically: not where it leads, but how it is
// spelled, for the checks that must hold for both.
func (f *Fence) asWritten(given string) string {
	if !filepath.IsAbs(given) {
		given = filepath.Join(f.policy.Base(), given)
	}
	return filepath.Clean(given)
}

// identityWithin is the identity fallback of docs/design.md §4 step 4. It runs
// only when the lexical test failed, so the common denial pays for it and
// the common success does not.
func (f *Fence) identityWithin(i int, target string) (string, bool) {
	if f.rootInfos == nil {
		f.rootInfos = make([]os.FileInfo, len(f.roots))
		for j, r := range f.roots {
			f.rootInfos[j], _ = os.Stat(r.Path)
		}
	}
	if f.rootInfos[i] == nil {
		return "", false
	}
	return sameFileAncestor(f.rootInfos[i], target)
}

// protectedIn reports the protected glob or path that rel (inside its
// root) or the absolute path falls under.
//
// A glob names a path relative to the root, or, when it starts with "/"
// or "~" (the user database's home), an absolute one. A glob that names a
// folder covers everything beneath it, as in gitignore: "secrets" protects
// "secrets/key" as "secrets/**" does.
func (f *Fence) protectedIn(rel, canonical string) (string, bool) {
	for _, g := range f.policy.Protected {
		name, pattern := rel, f.policy.ExpandHome(g)
		if strings.HasPrefix(pattern, "/") {
			name = canonical
		} else if rel == "." {
			continue
		}
		if matchCovers(pattern, name) {
			return g, true
		}
	}
	for _, p := range f.absProtected {
		if _, ok := within(p, canonical); ok {
			return p, true
		}
	}
	return "", false
}
