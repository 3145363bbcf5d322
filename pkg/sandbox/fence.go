package sandbox

import (
	"bufio"
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

	absProtected []string // canonical paths protected with all beneath them
	denyRead     []string // deny_read globs, "~" expanded, anchored
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
		case !strings.HasPrefix(g, "/"):
			// A relative glob names such a path wherever it is.
			g = "**/" + g
		}
		f.denyRead = append(f.denyRead, g)
	}
	return f
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
			}
		}
	}
}

// readGitdir returns the target of a ".git" pointer file ("gitdir: …").
func readGitdir(dotgit string) (string, bool) {
	fi, err := os.Lstat(dotgit)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return "", false
	}
	file, err := os.Open(dotgit)
	if err != nil {
		return "", false
	}
	defer file.Close()
	line, _ := bufio.NewReader(file).ReadString('\n')
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	gitdir = strings.TrimSpace(gitdir)
	return gitdir, ok && gitdir != ""
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
		if matchGlob(g, t.Path) || matchGlob(g, lexical) {
			return g, true
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
	if f.escalateTo == "" || f.escalated || !f.escalateTo.Wider(f.mode) {
		return denied
	}
	if needed.Wider(f.escalateTo) {
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
	var found bool
	for i, r := range roots {
		rel, ok := within(r.Path, t.Path)
		if !ok {
			rel, ok = f.identityWithin(i, t.Path)
		}
		if !ok {
			continue
		}
		if g, hit := f.protectedIn(r.Path, rel, t.Path); hit {
			return ReasonProtected, g, DangerFullAccess
		}
		if completesBareRepo(r.Path, rel) {
			return ReasonBareRepo, "", DangerFullAccess
		}
		// The innermost root confines the handle most tightly; roots
		// nest rarely, so keep the longest match.
		if !found || len(r.Path) > len(t.Root) {
			t.Root, t.Rel, found = r.Path, rel, true
		}
	}
	if !found {
		return ReasonOutsideRoots, "", DangerFullAccess
	}
	return "", "", ""
}

// identityWithin is the identity fallback of DESIGN.md §4 step 4. It runs
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

// protectedIn reports the protected glob or path that rel (inside root)
// falls under.
func (f *Fence) protectedIn(root, rel, canonical string) (string, bool) {
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

// bareRepoParts are the entries whose presence together at the top of a
// folder make git treat it as a bare repository.
var bareRepoParts = []string{"HEAD", "objects", "refs"}

// completesBareRepo reports whether writing rel inside root touches one of
// HEAD, objects/ or refs/ at the top of the root while the other two exist:
// git run later outside any sandbox would take the root for a repository
// and honour a config planted there.
func completesBareRepo(root, rel string) bool {
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	hit := false
	for _, p := range bareRepoParts {
		if p == first {
			hit = true
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			return false
		}
	}
	return hit
}
