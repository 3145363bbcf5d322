package supervisor

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
)

// planSettings loads the settings of a call in ws with system as the
// trusted system config's content.
func planSettings(t *testing.T, ws, system string) *config.Settings {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(system), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"DSH_FS_CWD": ws, "DSH_FS_TMP": "false", "HOME": dir}
	s, err := config.Load(config.Source{
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Getwd:     func() (string, error) { return ws, nil },
		Locations: config.Locations{SystemDir: dir, Home: func() (string, error) { return dir, nil }},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSessionPlan: the plan of a session computed without one has the
// workspace writable, its .git's config read-only and a missing
// protected folder planned, the sockets allow_unix_sockets names, the
// network and the allowlist's proxy standing in; and it leaves the
// workspace as it was: no placeholder is made.
func TestSessionPlan(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{".git/objects", ".git/refs"} {
		os.MkdirAll(filepath.Join(ws, d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
	before, _ := os.ReadDir(ws)
	pl, err := SessionPlan(planSettings(t, ws, "network: allowlist\nallow_unix_sockets:\n  - /run/x.sock\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !pl.RestrictWrites || !slices.Equal(pl.Writable, []string{ws}) || pl.Files == nil {
		t.Fatalf("plan %+v", pl)
	}
	for _, p := range []string{filepath.Join(ws, ".git", "config"), filepath.Join(ws, ".vscode")} {
		if !slices.Contains(pl.Files.ReadOnly, p) {
			t.Errorf("%s is not read-only in %q", p, pl.Files.ReadOnly)
		}
	}
	if !slices.Equal(pl.Sockets, []string{"/run/x.sock"}) || !pl.Network || pl.ProxyFD != -1 || pl.ProxyPort != 0 {
		t.Errorf("sockets %q network %t proxy fd %d port %d", pl.Sockets, pl.Network, pl.ProxyFD, pl.ProxyPort)
	}
	if after, _ := os.ReadDir(ws); len(after) != len(before) {
		t.Errorf("the workspace changed: %d entries, was %d", len(after), len(before))
	}
	pl, err = SessionPlan(planSettings(t, ws, "mode: danger-full-access\nnetwork: on\n"))
	if err != nil {
		t.Fatal(err)
	}
	if pl.RestrictWrites || pl.Files != nil || pl.Sockets != nil || pl.Network || pl.ProxyFD != 0 {
		t.Errorf("danger-full-access: %+v", pl)
	}
}
