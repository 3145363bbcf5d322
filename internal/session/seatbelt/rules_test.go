package seatbelt

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt/sbpltest"
)

// identity resolves every path as itself: the plans below are spelled
// as real macOS paths already.
func identity(p string) (string, error) { return p, nil }

// decide builds p's profile and asks the evaluator op on object.
func decide(t *testing.T, p *plan.Plan) func(op, object string) bool {
	t.Helper()
	prof, err := Build(p, identity)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{}
	for _, pa := range prof.Params {
		params[pa.Name] = pa.Value
	}
	ev, err := sbpltest.Compile(prof.Text, params)
	if err != nil {
		t.Fatalf("%v\n%s", err, prof.Text)
	}
	return func(op, object string) bool {
		ok, err := ev.Decide(op, object)
		if err != nil {
			t.Fatalf("%s %s: %v", op, object, err)
		}
		return ok
	}
}

// TestPlanRules: the parts of a plan no table scenario has: a cache
// written in place and one shown through a copy-on-write layer (kept
// read-only: macOS has none), a protected path's symlink neither removed
// nor made again, deny_read globs held on every path by a
// regex (one no regex carries named and held only where the plan found
// its files), exec's
// runtime folder hidden but for the session's record and denial log,
// and a plan that restricts nothing (danger-full-access).
func TestPlanRules(t *testing.T) {
	allow := decide(t, &plan.Plan{RestrictWrites: true, Writable: []string{"/Users/a/ws"},
		Caches: []string{"/Users/a/go/pkg/mod", "/Users/a/.npm"}, Sockets: []string{}, Network: true,
		Files: &plan.Files{
			Overlays:    []plan.Overlay{{Path: "/Users/a/.npm", Upper: "/private/var/run/u", Work: "/private/var/run/w"}},
			DenyGlobs:   []string{"**/.env", "/Users/*/.ssh", "**/[Ss]ecret"},
			HiddenFiles: []string{"/Users/a/ws/.env"},
			ReadOnly:    []string{"/Users/a/ws/.git/hooks", "/Users/a/ws/.git/config", "/Users/a/ws/decoy"},
			PinnedLinks: []string{"/Users/a/ws/.codex"},
			Runtime:     "/private/var/run/dsh-fs", Record: "/private/var/run/dsh-fs/s1/record.json",
		}})
	for _, tc := range []struct {
		op, obj string
		want    bool
	}{
		{sbpltest.FileWriteCreate, "/Users/a/go/pkg/mod/x", true},
		{sbpltest.FileWriteCreate, "/Users/a/.npm/x", false},
		{sbpltest.FileReadData, "/Users/a/.ssh/id_ed25519", false},
		{sbpltest.FileReadData, "/Users/a/ws/main.go", true},
		{sbpltest.FileReadData, "/Users/a/go/pkg/mod/x", true},
		{sbpltest.FileReadData, "/Users/a/ws/.env", false},
		{sbpltest.FileReadData, "/Users/b/other/.env", false},
		{sbpltest.FileReadData, "/Users/b/other/.ENV", false},
		{sbpltest.FileReadData, "/private/tmp/x/.env/inner", false},
		{sbpltest.FileWriteUnlink, "/Users/a/ws/sub/.env", false},
		{sbpltest.FileReadData, "/Users/a/ws/.envrc", true},
		{sbpltest.FileReadData, "/Users/b/.ssh/config", false},
		{sbpltest.FileReadData, "/Users/b/x/.ssh/config", true},
		{sbpltest.FileReadData, "/Users/a/ws/Secret", true},
		{sbpltest.FileWriteUnlink, "/Users/a/ws", false},
		{sbpltest.FileWriteCreate, "/Users/a/ws/.git/hooks/pre-commit", false},
		{sbpltest.FileWriteCreate, "/Users/a/ws/.GIT/Hooks/pre-commit", false},
		{sbpltest.FileWriteUnlink, "/Users/a/ws/.Git", false},
		{sbpltest.FileWriteCreate, "/Users/a/ws/.gitx", true},
		{sbpltest.FileWriteCreate, "/Users/a/ws/sub/x", true},
		{sbpltest.FileWriteUnlink, "/Users/a/ws/.codex", false},
		{sbpltest.FileWriteCreate, "/Users/a/ws/.codex", false},
		{sbpltest.FileWriteUnlink, "/Users/a/ws/plain-link", true},
		{sbpltest.FileReadData, "/private/var/run/dsh-fs/s2/record.json", false},
		{sbpltest.FileReadData, "/private/var/run/dsh-fs/s1/record.json", true},
		{sbpltest.FileReadData, "/private/var/run/dsh-fs/s1/denials/log", true},
		{sbpltest.FileWriteData, "/private/var/run/dsh-fs/s1/record.json", false},
		{sbpltest.NetworkOutbound, "/private/var/run/mDNSResponder", false},
		{sbpltest.NetworkOutbound, "ip:127.0.0.1:80", false},
	} {
		if got := allow(tc.op, tc.obj); got != tc.want {
			t.Errorf("%s %s: allow=%t, want %t", tc.op, tc.obj, got, tc.want)
		}
	}
	full := decide(t, &plan.Plan{})
	for _, tc := range []struct {
		op, obj string
		want    bool
	}{
		{sbpltest.FileWriteCreate, "/Users/a/anything", true},
		{sbpltest.NetworkOutbound, "/private/var/run/any.sock", true},
		{sbpltest.NetworkOutbound, "ip:10.1.2.3:443", true},
	} {
		if got := full(tc.op, tc.obj); got != tc.want {
			t.Errorf("danger-full-access: %s %s: allow=%t, want %t", tc.op, tc.obj, got, tc.want)
		}
	}
	proxy := decide(t, &plan.Plan{RestrictWrites: true, Network: true, ProxyPort: 8123, Sockets: []string{}})
	if !proxy(sbpltest.NetworkOutbound, "ip:127.0.0.1:8123") || proxy(sbpltest.NetworkOutbound, "ip:127.0.0.1:8124") ||
		proxy(sbpltest.NetworkOutbound, "ip:93.184.216.34:443") {
		t.Errorf("allowlist: only the proxy's port on loopback is reachable")
	}
}
