package layout

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

func TestUnanchoredDeny(t *testing.T) {
	p := policy.Policy{Home: "/home/u", DenyRead: []string{"**/.env", "secrets", "~/.ssh", "/etc/secret", "/home/*/x/key", "~/.aws/**", "/srv/**"}}
	got := unanchoredDeny(p)
	// A relative glob, and an absolute one with a wildcard before its
	// last component; not one folder's name, nor "/x/**" (one folder).
	want := []string{"**/.env", "**/secrets", "/home/*/x/key"}
	if !slices.Equal(got, want) {
		t.Errorf("unanchoredDeny = %q, want %q", got, want)
	}
	if why := ReadViewWhy(policy.Policy{DenyRead: []string{"~/.ssh"}, Home: "/home/u"}); why != "" {
		t.Errorf("ReadViewWhy without an unanchored glob = %q", why)
	}
}

func TestSystemFolder(t *testing.T) {
	for c, want := range map[string]bool{"/": true, "/bin": true, "/usr/sbin": true, "/var/lib/x": true, "/nonexistent": true,
		"/tmp/home": true, "/home": false, "/root": false, "/home/alice": false, "/home/alice/x": false} {
		if got := systemFolder(c); got != want {
			t.Errorf("systemFolder(%s) = %t, want %t", c, got, want)
		}
	}
}

func TestPlanReadView(t *testing.T) {
	if readOnlyTreeWhy() != "" {
		t.Skip("no new mount calls here: no read view")
	}
	base, err := os.MkdirTemp("/home", "dsh-fs-view-unit-")
	if err != nil {
		t.Skipf("cannot make a folder in /home: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	makeTree(t, base, "ws/.env", "ws/.git/HEAD", "other/.env", ".gitconfig", ".cache/go-build/x", ".ssh/id")
	ws := filepath.Join(base, "ws")
	p := policy.Policy{Mode: policy.WorkspaceWrite, Cwd: ws, Home: base, DenyRead: []string{"**/.env", "~/.ssh"},
		ReadHome: []string{"~/.gitconfig", "~/.bashrc"}}
	m := planMounts(p, []sandbox.Root{{Path: ws, Origin: "cwd"}})
	m.PlanReadView(p, []string{ws}, []string{filepath.Join(base, ".cache/go-build"), "/usr/bin/env"})
	v := m.View
	if v == nil || v.Why != "" {
		t.Fatalf("no view: %+v", v)
	}
	if !slices.Contains(v.Covered, "/home") || slices.Contains(v.Covered, base) || slices.Contains(v.Covered, "/") {
		t.Errorf("covered = %q, want /home and no folder beneath it", v.Covered)
	}
	// The root, the cache, the read_home entry that exists; not one
	// outside the homes, nor a missing one.
	wantKept := []string{filepath.Join(base, ".cache/go-build"), filepath.Join(base, ".gitconfig"), ws}
	if !slices.Equal(v.Kept, wantKept) || v.Home != base {
		t.Errorf("kept = %q, home %q, want %q, %q", v.Kept, v.Home, wantKept, base)
	}
	if want := wantKept[:2]; !slices.Equal(v.Unwalked, want) {
		t.Errorf("unwalked = %q, want %q", v.Unwalked, want)
	}
	// ~/.ssh lies in the view's cover: nothing to hide there any more;
	// the workspace's .env is hidden as before.
	if len(m.Hidden) != 0 || !slices.Equal(m.HiddenFiles, []string{filepath.Join(ws, ".env")}) {
		t.Errorf("hidden %q, hidden files %q", m.Hidden, m.HiddenFiles)
	}
}

// TestPlanReadViewCwd: a working folder that is no root (a refused
// workspace) is kept, and a home folder that is it, or lies in it, is
// not covered: the shell starts there.
func TestPlanReadViewCwd(t *testing.T) {
	if readOnlyTreeWhy() != "" {
		t.Skip("no new mount calls here: no read view")
	}
	base, err := os.MkdirTemp("/home", "dsh-fs-view-unit-")
	if err != nil {
		t.Skipf("cannot make a folder in /home: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	makeTree(t, base, "proj/a.go")
	p := policy.Policy{Mode: policy.ReadOnly, Cwd: filepath.Join(base, "proj"), Home: base, DenyRead: []string{"**/.env"}}
	var m MountPlan
	m.PlanReadView(p, nil, nil)
	if m.View == nil || !slices.Equal(m.View.Kept, []string{p.Cwd}) || !slices.Equal(m.View.Unwalked, []string{p.Cwd}) {
		t.Errorf("view with a cwd that is no root: %+v", m.View)
	}
	p.Cwd = "/home"
	m = MountPlan{}
	m.PlanReadView(p, nil, nil)
	if m.View == nil || slices.Contains(m.View.Covered, "/home") {
		t.Errorf("the working folder /home was covered: %+v", m.View)
	}
}
