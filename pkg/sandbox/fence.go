package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Target is a path the fence has resolved.
type Target struct {
	// Given is the path as the caller wrote it.
	Given string
	// Path is the canonical absolute path (see Canonical).
	Path string
	// Root is the canonical writable root that contains Path, once
	// CheckWrite has passed in workspace-write mode; "" otherwise.
	Root string
	// Rel is Path relative to Root ("." for the root itself).
	Rel string
}

// Fence applies one Policy to the paths of one call. It is not safe for
// concurrent use.
type Fence struct {
	policy    Policy
	mode      Mode
	escalated bool
	enforced  bool // the kernel layer is in place

	escalateTo Mode
	ask        func(EscalationRequest) error

	roots      []Root
	rootInfos  []os.FileInfo
	rootsErr   error
	rootsReady bool

	absProtected []string   // canonical paths protected with all beneath them
	denyRead     []denyGlob // deny_read globs, "~" expanded, anchored
}

// EscalationRequest is what a person is asked to approve.
type EscalationRequest struct {
	Op, Path, Reason string
	From, To         Mode
}

// NewFence returns the fence of policy p.
func NewFence(p Policy) *Fence {
	f := &Fence{policy: p, mode: p.Mode, ask: askTTY}
	home, _ := os.UserHomeDir()
	for _, g := range p.DenyRead {
		switch {
		case g == "~" || strings.HasPrefix(g, "~/"):
			g = home + g[1:]
		case !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "**/"):
			// A relative glob names such a path wherever it is.
			g = "**/" + g
		}
		f.denyRead = append(f.denyRead, denyGlob{g, g})
		// A secret folder reached through a symlinked spelling of the
		// glob's own prefix ($HOME a symlink, ~/.ssh a symlink) is
		// matched by its canonical spelling too.
		if c := canonicalGlob(p.Cwd, g); c != g {
			f.denyRead = append(f.denyRead, denyGlob{c, g})
		}
	}
	return f
}

// denyGlob is a deny_read glob to match, and the glob to name in a denial
// (the configured one, when match is its canonical spelling).
type denyGlob struct{ match, shown string }

// canonicalGlob resolves the symlinks in the literal leading folders of an
// absolute glob: "/home/u/.ssh/**" with /home/u a symlink to /data/u
// becomes "/data/u/.ssh/**". Globs with no absolute literal prefix come
// back as they are.
func canonicalGlob(cwd, g string) string {
	if !strings.HasPrefix(g, "/") {
		return g
	}
	parts := strings.Split(g, "/")
	n := 0
	for n < len(parts) && !strings.ContainsAny(parts[n], "*?[\\") {
		n++
	}
	prefix := strings.Join(parts[:n], "/")
	if prefix == "" {
		return g
	}
	canon, err := Canonical(cwd, prefix)
	if err != nil {
		return g
	}
	return strings.Join(append([]string{canon}, parts[n:]...), "/")
}

// SetEscalation asks, for this one call, for mode to when a mutation is
// denied and to would allow it. The policy's approval setting decides;
// with approval "tty", ask is called (nil keeps the /dev/tty prompt).
func (f *Fence) SetEscalation(to Mode, ask func(EscalationRequest) error) {
	f.escalateTo = to
	if ask != nil {
		f.ask = ask
	}
}

// Mode returns the effective mode: the session's, or the escalated one.
func (f *Fence) Mode() Mode { return f.mode }

// Escalated reports whether an escalation was granted in this call.
func (f *Fence) Escalated() bool { return f.escalated }

// Policy returns the fence's policy.
func (f *Fence) Policy() Policy { return f.policy }

// Roots returns the canonical writable roots, computed once per fence.
func (f *Fence) Roots() ([]Root, error) {
	if !f.rootsReady {
		f.rootsReady = true
		f.roots, f.rootsErr = WritableRoots(f.policy)
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

// loadAbsProtected collects the protected paths that are not globs: the
// loaded config file, and the gitdir a ".git" pointer file names at the top
// of a root (a worktree's or submodule's real git folder).
func (f *Fence) loadAbsProtected() {
	if f.policy.ConfigFile != "" {
		if c, err := Canonical(f.policy.Cwd, f.policy.ConfigFile); err == nil {
			f.absProtected = append(f.absProtected, c)
		}
	}
	for _, r := range f.roots {
		dotgit := filepath.Join(r.Path, ".git")
		if gitdir, ok := readGitdir(dotgit); ok {
			if c, err := Canonical(r.Path, gitdir); err == nil {
				f.absProtected = append(f.absProtected, c)
				// A worktree's gitdir names, in commondir, the repository
				// whose hooks and config git uses for it.
				if common, ok := readCommondir(c); ok {
					if cc, err := Canonical(c, common); err == nil {
						f.absProtected = append(f.absProtected, cc)
					}
				}
			}
		} else if c, err := Canonical(r.Path, ".git"); err == nil && c != dotgit {
			// .git is a symlink: its target is the repository.
			f.absProtected = append(f.absProtected, c)
		}
	}
}

// Resolve canonicalizes path against the session cwd.
func (f *Fence) Resolve(path string) (Target, error) {
	canon, err := Canonical(f.policy.Cwd, path)
	if err != nil {
		return Target{Given: path}, err
	}
	return Target{Given: path, Path: canon}, nil
}

// CheckRead denies reading t when it matches a deny_read glob, in every
// mode. Both the canonical path and the path as written (made absolute,
// cleaned) are tested, so neither a symlink into a secret folder nor a
// symlinked secret folder reads what the list forbids.
func (f *Fence) CheckRead(op string, t Target) error {
	if g, ok := f.deniedRead(t); ok {
		return &DeniedError{Op: op, Path: t.Given, Mode: f.mode, Reason: ReasonDenyRead, Matched: g,
			WritableRoots: f.rootPaths(), MaxMode: f.policy.MaxMode, Approval: f.policy.Approval}
	}
	return nil
}

// ReadDenied reports whether the canonical path is under a deny_read glob.
// ls uses it to leave such entries out of a listing.
func (f *Fence) ReadDenied(canonical string) bool {
	_, ok := f.deniedRead(Target{Given: canonical, Path: canonical})
	return ok
}

func (f *Fence) deniedRead(t Target) (string, bool) {
	if len(f.denyRead) == 0 {
		return "", false
	}
	lexical := t.Given
	if !filepath.IsAbs(lexical) {
		lexical = filepath.Join(f.policy.Cwd, lexical)
	}
	lexical = filepath.Clean(lexical)
	for _, g := range f.denyRead {
		if matchGlob(g.match, t.Path) || matchGlob(g.match, lexical) {
			return g.shown, true
		}
	}
	return "", false
}

// CheckWrite decides whether t may be mutated under the effective mode, and
// on success in workspace-write mode fills in t.Root and t.Rel for the
// confined handle. A denial that an approved escalation would lift is
// escalated once, and the check repeated in the wider mode.
func (f *Fence) CheckWrite(op string, t *Target) error {
	reason, matched, needed := f.writeVerdict(t)
	if reason == "" {
		return nil
	}
	denied := &DeniedError{Op: op, Path: t.Given, Mode: f.mode, Reason: reason, Matched: matched,
		WritableRoots: f.rootPaths(), Needed: needed, MaxMode: f.policy.MaxMode, Approval: f.policy.Approval}
	if f.escalateTo == "" || f.escalated {
		return denied
	}
	if !f.escalateTo.Wider(f.mode) || needed.Wider(f.escalateTo) {
		denied.Refusal = fmt.Sprintf("--escalate %s would not allow it", f.escalateTo)
		return denied
	}
	if err := f.approve(EscalationRequest{Op: op, Path: t.Given, Reason: reason, From: f.mode, To: f.escalateTo}); err != nil {
		denied.Refusal = err.Error()
		return denied
	}
	f.mode, f.escalated = f.escalateTo, true
	return f.CheckWrite(op, t)
}

// approve applies the policy's approval setting to one escalation.
func (f *Fence) approve(req EscalationRequest) error {
	if req.To.Wider(f.policy.MaxMode) {
		return fmt.Errorf("escalation to %s refused: %s %s", req.To, ReasonAboveMaxMode, f.policy.MaxMode)
	}
	switch f.policy.Approval {
	case ApprovalTrust:
		return nil
	case ApprovalNever:
		return fmt.Errorf("escalation to %s refused: approval is never", req.To)
	}
	return f.ask(req)
}

// Writable reports whether a mutation of t would pass the current policy,
// without escalating, and the reason when it would not.
func (f *Fence) Writable(t Target) (bool, string) {
	reason, _, _ := f.writeVerdict(&t)
	return reason == "", reason
}

// writeVerdict returns "" when t may be mutated in the effective mode, or
// the reason it may not, what it matched, and the narrowest mode that would
// allow it.
func (f *Fence) writeVerdict(t *Target) (reason, matched string, needed Mode) {
	switch f.mode {
	case DangerFullAccess:
		return "", "", ""
	case ReadOnly:
		if r, _, _ := f.workspaceVerdict(&Target{Given: t.Given, Path: t.Path}); r == "" {
			return ReasonReadOnly, "", WorkspaceWrite
		}
		return ReasonReadOnly, "", DangerFullAccess
	}
	return f.workspaceVerdict(t)
}

func (f *Fence) workspaceVerdict(t *Target) (reason, matched string, needed Mode) {
	roots, err := f.Roots()
	if err != nil {
		return ReasonOutsideRoots, "", DangerFullAccess
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
			return ReasonProtected, g, DangerFullAccess
		}
		// The path as written may name a protected folder through a
		// symlink (.vscode => editor): that spelling is protected too.
		if wRel, ok := within(r, written); ok {
			if g, hit := f.protectedIn(wRel, written); hit {
				return ReasonProtected, g, DangerFullAccess
			}
		}
		if dir, hit := insideGitDir(r, t.Path); hit {
			return ReasonProtected, dir, DangerFullAccess
		}
		if completesGitDir(r, inRel) {
			return ReasonBareRepo, "", DangerFullAccess
		}
		// The innermost root confines the handle most tightly; roots
		// nest rarely, so keep the longest match.
		if root == "" || len(r) > len(root) {
			root, rel = r, inRel
		}
	}
	if root == "" {
		return ReasonOutsideRoots, "", DangerFullAccess
	}
	t.Root, t.Rel = root, rel
	return "", "", ""
}

// asWritten is the path as the caller wrote it, made absolute against the
// session cwd and cleaned lexically: not where it leads, but how it is
// spelled, for the checks that must hold for both.
func (f *Fence) asWritten(given string) string {
	if !filepath.IsAbs(given) {
		given = filepath.Join(f.policy.Cwd, given)
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
func (f *Fence) protectedIn(rel, canonical string) (string, bool) {
	if rel != "." {
		for _, g := range f.policy.Protected {
			if matchGlob(g, rel) {
				return g, true
			}
		}
	}
	for _, p := range f.absProtected {
		if _, ok := within(p, canonical); ok {
			return p, true
		}
	}
	return "", false
}
