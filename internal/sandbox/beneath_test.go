//go:build unix

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// moveIn runs a move of src to dst inside the workspace of p as
// fsops.Move does: both names checked, both folders opened, then Rename.
func moveIn(t *testing.T, p policy.Policy, src, dst string) error {
	t.Helper()
	return moveInWith(t, p, src, dst, nil)
}

// moveInWith is moveIn with beforeRename run between the decision and
// the rename.
func moveInWith(t *testing.T, p policy.Policy, src, dst string, beforeRename func()) error {
	t.Helper()
	f := NewFence(p)
	f.beforeRename = beforeRename
	s, err := f.Resolve(src)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.Resolve(dst)
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range []*Target{&s, &d} {
		if err := f.CheckRead("move", *tg); err != nil {
			return err
		}
		if err := f.CheckWrite("move", tg); err != nil {
			return err
		}
	}
	to, toName, err := f.openDir("move", d, false)
	if err != nil {
		return err
	}
	defer to.Close()
	from, fromName, err := f.openDir("move", s, false)
	if err != nil {
		return err
	}
	defer from.Close()
	_, err = f.rename("move", s, d, from, fromName, to, toName)
	return err
}

// TestRenameBeneath: the table of the folder rule. A folder is refused
// when something beneath it is covered by an entry on one side of the
// move only; entries that cover it on both sides let it go.
func TestRenameBeneath(t *testing.T) {
	for _, tc := range []struct {
		name       string
		protected  []string
		denyRead   []string // "$WS" is the workspace
		layout     map[string]string
		src, dst   string
		reason     string // "" allowed
		matchedHas string
	}{
		{name: "plain folder", layout: map[string]string{"a/b/c.txt": "x"}, src: "a", dst: "z"},
		{name: "a nested repository moves: the git rule covers its .git on both sides",
			layout: map[string]string{"a/.git/HEAD": "x"}, src: "a", dst: "z"},
		// A folder moved into a git directory could plant a worktree's
		// or submodule's config and hooks no glob names; out of one, carry
		// them away.
		{name: "a folder into a .git is refused",
			layout: map[string]string{"m/w/HEAD": "x", "m/w/commondir": "../..", "m/w/config.worktree": "[core]", ".git/HEAD": "x"},
			src:    "m", dst: ".git/worktrees", reason: policy.ReasonProtected, matchedHas: ".git"},
		{name: "a folder out of a repository is refused",
			layout: map[string]string{"r.git/HEAD": "x", "r.git/objects/x": "", "r.git/refs/x": "", "r.git/worktrees/w/commondir": "../.."},
			src:    "r.git/worktrees", dst: "w2", reason: policy.ReasonProtected, matchedHas: "r.git"},
		{name: "a file into a .git's data moves",
			layout: map[string]string{"f.txt": "x", ".git/HEAD": "x"}, src: "f.txt", dst: ".git/f.txt"},
		{name: "a root-relative protected file beneath, source side", protected: []string{"conf/app.yaml"},
			layout: map[string]string{"conf/app.yaml": "x"}, src: "conf", dst: "z", reason: policy.ReasonProtected, matchedHas: "conf/app.yaml"},
		{name: "a root-relative protected file, destination side", protected: []string{"conf/app.yaml"},
			layout: map[string]string{"made/app.yaml": "x"}, src: "made", dst: "conf", reason: policy.ReasonProtected, matchedHas: "conf/app.yaml"},
		{name: "a protected path that does not exist yet, by prefix", protected: []string{"conf/sub/app.yaml"},
			layout: map[string]string{"made/x": "x"}, src: "made", dst: "conf", reason: policy.ReasonProtected},
		{name: "a two-part relative protected glob, source side", protected: []string{"**/keys/*.pem"},
			layout: map[string]string{"p/keys/a.pem": "x"}, src: "p/keys", dst: "p/k2", reason: policy.ReasonProtected, matchedHas: "at a.pem"},
		{name: "a two-part relative protected glob kept", protected: []string{"**/keys/*.pem"},
			layout: map[string]string{"p/keys/a.pem": "x"}, src: "p", dst: "q"},
		{name: "deny_read anchored folder above", denyRead: []string{"$WS/area/private"},
			layout: map[string]string{"area/private/k": "x"}, src: "area", dst: "z", reason: policy.ReasonDenyRead},
		{name: "deny_read anchored glob with a wildcard beneath", denyRead: []string{"$WS/area/*/k"},
			layout: map[string]string{"area/x/k": "x"}, src: "area", dst: "z", reason: policy.ReasonDenyRead},
		{name: "deny_read two-part relative glob, destination side", denyRead: []string{"vault/*.key"},
			layout: map[string]string{"mine/x.key": "x"}, src: "mine", dst: "vault", reason: policy.ReasonDenyRead, matchedHas: "at x.key"},
		{name: "deny_read one-part relative glob moves", denyRead: []string{".env"},
			layout: map[string]string{"a/.env": "x"}, src: "a", dst: "z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := tempRoot(t)
			ws := filepath.Join(root, "ws")
			for name, content := range tc.layout {
				writeNested(t, ws, name, content)
			}
			p := testPolicy(root, policy.WorkspaceWrite)
			p.Protected = append(p.Protected, tc.protected...)
			for _, g := range tc.denyRead {
				p.DenyRead = append(p.DenyRead, expandWS(g, ws))
			}
			err := moveIn(t, p, tc.src, tc.dst)
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if _, err := os.Lstat(filepath.Join(ws, tc.dst)); err != nil {
					t.Errorf("not moved: %v", err)
				}
				return
			}
			de := deniedAs(t, err)
			if de.Reason != tc.reason || !strings.Contains(de.Matched, tc.matchedHas) {
				t.Errorf("denied %q (%s), want %q with %q", de.Reason, de.Matched, tc.reason, tc.matchedHas)
			}
			if _, err := os.Lstat(filepath.Join(ws, tc.src)); err != nil {
				t.Errorf("the source moved anyway: %v", err)
			}
		})
	}
}

// writeNested writes root/name, making its folders.
func writeNested(t *testing.T, root, name, content string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func expandWS(s, ws string) string {
	if len(s) >= 3 && s[:3] == "$WS" {
		return ws + s[3:]
	}
	return s
}

// TestRenameBeneathBound: a folder with more entries than the walk looks
// through is refused, not decided on part of what it carries.
func TestRenameBeneathBound(t *testing.T) {
	root := tempRoot(t)
	ws := filepath.Join(root, "ws")
	dir := filepath.Join(ws, "big", "sub")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range maxBeneathEntries + 1 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(i)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := testPolicy(root, policy.WorkspaceWrite)
	p.DenyRead = []string{"vault/*.key"}
	de := deniedAs(t, moveIn(t, p, "big", "z"))
	if de.Reason != policy.ReasonDenyRead || !strings.Contains(de.Matched, fmt.Sprintf("more than %d entries", maxBeneathEntries)) {
		t.Errorf("denied %q (%s)", de.Reason, de.Matched)
	}
	// Without an entry to look for, there is no walk and no bound.
	if err := moveIn(t, testPolicy(root, policy.WorkspaceWrite), "big", "z"); err != nil {
		t.Errorf("no entry to look for: %v", err)
	}
}

// TestRenameExchangedSource: a folder exchanged (RENAME_EXCHANGE) for the
// one decided on, between the decision and the rename, is moved back and
// the move is FS_STALE: the secret folder stays where deny_read names it.
func TestRenameExchangedSource(t *testing.T) {
	root := tempRoot(t)
	ws := filepath.Join(root, "ws")
	writeNested(t, ws, "box/vault/id.key", "secret")
	p := testPolicy(root, policy.WorkspaceWrite)
	p.DenyRead = []string{"vault/*.key"}
	exchanged := false
	writeNested(t, ws, "box/plain/x.txt", "x")
	err := moveInWith(t, p, "box/plain", "box/shown", func() {
		exchanged = exchange(filepath.Join(ws, "box", "plain"), filepath.Join(ws, "box", "vault")) == nil
	})
	if !exchanged {
		t.Fatal("the exchange did not happen")
	}
	var fe *fserr.Error
	if !errors.As(err, &fe) || fe.Code() != fserr.Stale {
		t.Fatalf("move = %v, want FS_STALE", err)
	}
	if _, err := os.Lstat(filepath.Join(ws, "box", "shown")); !os.IsNotExist(err) {
		t.Errorf("box/shown exists: %v", err)
	}
	// What was exchanged in is back under the name it was moved from.
	if _, err := os.Lstat(filepath.Join(ws, "box", "plain", "id.key")); err != nil {
		t.Errorf("the exchanged folder was not moved back: %v", err)
	}
}
