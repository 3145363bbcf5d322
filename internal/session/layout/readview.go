package layout

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// The read view of a dsh-fs exec session (docs/design.md §10). A
// deny_read glob that is not anchored to one folder ("**/.env", or
// "/home/*/secrets/x") names files anywhere on disk, and no walk at the
// start can find them all: the mount layer hides what the walks of the
// roots meet, and the shell read the .env files of the person's other
// projects and caches in full. Where the policy has such a glob, the
// session's shell sees the home folders through a view instead: each is
// covered by an empty read-only tmpfs, into which the session's own
// places are bound back as they are (the roots, the toolchain caches the
// session uses, the trusted read_home entries, dsh-fs itself), and HOME
// is an empty folder. What lies outside the home folders (the system
// folders, the toolchains installed there) stays visible, and so does
// everything bound back: an unanchored glob is enforced there only where
// the walks of the roots go, and policy names the rest.

// unanchoredDeny are the deny_read globs of p that name paths anywhere
// beneath some folder: relative ones, and absolute ones with a wildcard
// before their last component.
func unanchoredDeny(p policy.Policy) []string {
	var out []string
	match, shown := sandbox.NewFence(p).DenyReadGlobs()
	for i, g := range match {
		_, rest := pathmatch.LiteralPrefix(g)
		if (!strings.HasPrefix(g, "/") || len(rest) > 1) && !slices.Contains(out, shown[i]) {
			out = append(out, shown[i])
		}
	}
	return out
}

// ReadViewWhy says why a session under p gets no read view although it
// has a glob the view is for, or "" when it gets one or needs none.
func ReadViewWhy(p policy.Policy) string {
	if len(unanchoredDeny(p)) == 0 {
		return ""
	}
	return readOnlyTreeWhy()
}

// PlanReadView adds the read view of a session under p to m, with its
// roots (canonical, every root: in read-only mode the workspace is one)
// and keep, the other canonical places it uses (its caches, dsh-fs
// itself). It makes none without an unanchored deny_read glob, or on a
// kernel without the new mount calls (ReadViewWhy). What the rest of the
// plan would mount beneath a covered folder and outside a kept path is
// dropped: the view leaves nothing there to mount on.
func (m *MountPlan) PlanReadView(p policy.Policy, roots, keep []string) {
	globs := unanchoredDeny(p)
	if len(globs) == 0 {
		return
	}
	v := &plan.ReadView{Globs: globs, Covered: []string{}, Kept: []string{}, Unwalked: []string{}}
	m.View = v
	if v.Why = readOnlyTreeWhy(); v.Why != "" {
		return
	}
	// The working folder too: a refused workspace (the home folder
	// itself) is no root, and the shell starts there.
	notCovered := slices.Clip(roots)
	cwd, err := sandbox.Canonical("/", p.Cwd)
	if err != nil || p.Cwd == "" {
		cwd = ""
	} else {
		notCovered = append(notCovered, cwd)
	}
	if v.Covered = homeFolders(p, notCovered); len(v.Covered) == 0 {
		v.Why, v.Covered = "no home folder to cover outside the roots", []string{}
		return
	}
	covered := v.Covered
	if h, err := sandbox.Canonical("/", p.Home); p.Home != "" && err == nil && pathmatch.BeneathAny(covered, h) {
		v.Home = h
	}
	set := map[string]bool{}
	walked := map[string]bool{}
	add := func(path string, isRoot bool) {
		c, err := sandbox.Canonical("/", path)
		if err != nil || !pathmatch.BeneathAny(covered, c) || slices.Contains(covered, c) {
			return
		}
		if _, err := os.Lstat(c); err == nil {
			set[c] = true
			walked[c] = walked[c] || isRoot
		}
	}
	for _, r := range roots {
		add(r, true)
	}
	if cwd != "" {
		add(cwd, false)
	}
	for _, k := range keep {
		add(k, false)
	}
	for _, e := range p.ReadHome {
		if p.Home != "" && strings.HasPrefix(e, "~/") {
			add(p.ExpandHome(e), false)
		}
	}
	for _, k := range sortedKeys(set) {
		if !slices.ContainsFunc(v.Kept, func(o string) bool { return sandbox.Beneath(o, k) }) {
			v.Kept = append(v.Kept, k)
			if !walked[k] {
				v.Unwalked = append(v.Unwalked, k)
			}
		}
	}
	m.dropUnderView()
}

// ReadViewText says, for policy, where the unanchored deny_read globs of
// a session planned as m hold for the shell: "" when it has none.
func (m MountPlan) ReadViewText() string {
	v := m.View
	if v == nil {
		return ""
	}
	globs := strings.Join(v.Globs, ", ")
	if v.Why != "" {
		return fmt.Sprintf("; %s enforced for the shell only in the walked roots: no read view (%s)", globs, v.Why)
	}
	text := fmt.Sprintf("; read view for %s: %s covered, the shell sees there only %s",
		globs, strings.Join(v.Covered, ", "), strings.Join(v.Kept, ", "))
	if v.Home != "" {
		text += " and the home folder " + v.Home + ", empty but for those"
	}
	text += "; not enforced for the shell outside the home folders but in the walked roots (/tmp, /opt, /srv, /var, …)"
	if len(v.Unwalked) > 0 {
		text += ", nor in " + strings.Join(v.Unwalked, ", ") + " (bound back, not walked)"
	}
	return text
}

// dropUnderView drops what m would mount on a path the view removes.
func (m *MountPlan) dropUnderView() {
	v := m.View
	shown := func(p string) bool { return !pathmatch.BeneathAny(v.Covered, p) || pathmatch.BeneathAny(v.Kept, p) }
	for _, list := range []*[]string{&m.ReadOnly, &m.Hidden, &m.HiddenFiles, &m.HiddenSockets, &m.Pinned, &m.PinnedLinks} {
		*list = nonNil(slices.DeleteFunc(*list, func(p string) bool { return !shown(p) }))
	}
}

// homeFolders are the canonical folders the view covers: /root, /home,
// p.Home and the home folders of the user database's users (root and
// uids from 1000, not the system accounts', which may be /bin or /var),
// each an existing folder that is no system folder, lies in no root, and
// is not beneath another of them.
func homeFolders(p policy.Policy, roots []string) []string {
	cands := append([]string{"/root", "/home", p.Home}, passwdHomes()...)
	var dirs []string
	for _, h := range cands {
		c, err := sandbox.Canonical("/", h)
		if h == "" || err != nil || systemFolder(c) || pathmatch.BeneathAny(roots, c) {
			continue
		}
		if fi, err := os.Lstat(c); err == nil && fi.IsDir() {
			dirs = append(dirs, c)
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	var out []string
	for _, d := range dirs {
		if !pathmatch.BeneathAny(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// systemFolder reports whether covering the folder c would cover a
// folder the system runs from: "/" and the top folders but /home, or a
// folder of the system's beneath /usr, /var, /etc, /run, /opt, /srv.
func systemFolder(c string) bool {
	if c == "/home" || c == "/root" {
		return false
	}
	top := strings.SplitN(strings.TrimPrefix(c, "/"), "/", 2)[0]
	return c == "/" || !strings.Contains(strings.TrimPrefix(c, "/"), "/") ||
		slices.Contains([]string{"usr", "bin", "sbin", "lib", "lib64", "etc", "var", "run", "proc", "sys", "dev", "tmp", "opt", "srv", "boot", "nix"}, top)
}

// passwdHomes are the home folders of /etc/passwd's root and ordinary
// users.
func passwdHomes() []string {
	f, err := os.Open("/etc/passwd")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ":")
		if len(fields) < 7 {
			continue
		}
		uid, err := strconv.Atoi(fields[2])
		if err == nil && (uid == 0 || uid >= 1000 && uid < 65534) && filepath.IsAbs(fields[5]) {
			out = append(out, fields[5])
		}
	}
	return out
}
