package supervisor

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestSeatbeltPlan: the plan a macOS session makes its profile from,
// read here on any OS: the writable roots, a protected path in the
// workspace among the file view's read-only paths, exec's runtime folder
// hidden but for the record, and the network as the setting says; under
// allowlist the proxy's port is the plan's and CMD's proxy variables name
// it; under off no proxy variable of exec's passes; danger-full-access
// restricts nothing.
func TestSeatbeltPlan(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, ".vscode"), 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "session-1")
	env := []string{"PATH=/usr/bin", "HTTPS_PROXY=http://exec-own:3128"}
	for _, tc := range []struct {
		name      string
		mode      policy.Mode
		network   policy.Network
		port      int
		fenced    bool
		wantProxy string // the HTTPS_PROXY CMD gets, "" for none
	}{
		{"workspace-write, off", policy.WorkspaceWrite, policy.NetworkOff, 0, true, ""},
		{"workspace-write, allowlist", policy.WorkspaceWrite, policy.NetworkAllowlist, 4567, true, "http://127.0.0.1:4567"},
		{"read-only, on", policy.ReadOnly, policy.NetworkOn, 0, false, "http://exec-own:3128"},
		{"danger-full-access", policy.DangerFullAccess, policy.NetworkOn, 0, false, "http://exec-own:3128"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sessionSettings(t, ws)
			p := s.Policy
			p.Mode, p.Network = tc.mode, tc.network
			rec := NewRecord(s, nil)
			rec.Roots = []string{ws}
			pl, err := seatbeltPlan(p, rec, dir, tc.port, env, false)
			if err != nil {
				t.Fatal(err)
			}
			held := tc.mode != policy.DangerFullAccess
			if pl.RestrictWrites != held || pl.Network != tc.fenced || pl.ProxyPort != tc.port || (tc.port != 0) != (pl.ProxyFD == -1) {
				t.Fatalf("restrict %v network %v port %d fd %d: want %v %v %d", pl.RestrictWrites, pl.Network, pl.ProxyPort, pl.ProxyFD, held, tc.fenced, tc.port)
			}
			if !held {
				if pl.Files != nil {
					t.Errorf("danger-full-access has a file view: %+v", pl.Files)
				}
			} else {
				if !slices.Contains(pl.Files.ReadOnly, filepath.Join(ws, ".vscode")) {
					t.Errorf("read-only paths %q: want %s/.vscode", pl.Files.ReadOnly, ws)
				}
				if pl.Files.Runtime != filepath.Dir(dir) || pl.Files.Record != wire.RecordPath(dir) {
					t.Errorf("runtime %q record %q: want %q and the record in %q", pl.Files.Runtime, pl.Files.Record, filepath.Dir(dir), dir)
				}
			}
			got := ""
			for _, kv := range pl.Env {
				if v, ok := strings.CutPrefix(kv, "HTTPS_PROXY="); ok {
					got = v
				}
			}
			if got != tc.wantProxy {
				t.Errorf("CMD's HTTPS_PROXY %q, want %q (env %q)", got, tc.wantProxy, pl.Env)
			}
		})
	}
}
