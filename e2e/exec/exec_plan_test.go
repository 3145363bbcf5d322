//go:build unix

package exec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestExecRecordHoldsPlan: the plan the session's child applied is in
// the session's record, read back inside the session (where the record
// is bound read-only): its layers agree with the record's own account of
// them, its file view is the mount layer's, and it holds nothing of CMD,
// neither its arguments nor its environment: a token in exec's
// environment, which CMD inherits, is nowhere in the record.
func TestExecRecordHoldsPlan(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	for _, d := range []string{".git/objects", ".git/refs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	const token = "plan-token-5f3e9a"
	env := execEnv(t, ws, "PLAN_TOKEN="+token)
	code, stdout, stderr := execSh(t, env, ws, fenced(ws), `cat "$DSH_FS_SESSION"; echo "$PLAN_TOKEN" >&2`)
	if code != 0 || !strings.Contains(stderr, token) {
		t.Fatalf("exit %d (want 0, and CMD given the token)\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if strings.Contains(stdout, token) || strings.Contains(stdout, "PLAN_TOKEN") {
		t.Errorf("the record holds CMD's environment:\n%s", stdout)
	}
	var rec wire.Record
	if err := json.Unmarshal([]byte(stdout), &rec); err != nil {
		t.Fatalf("the record inside is not JSON: %v\n%s", err, stdout)
	}
	applied := rec.Shell.AppliedPlan()
	if applied == nil {
		t.Fatalf("the record holds no plan:\n%s", stdout)
	}
	if applied.Path != "" || applied.Argv != nil || applied.Env != nil {
		t.Errorf("the recorded plan holds CMD: path %q, argv %q, env %q", applied.Path, applied.Argv, applied.Env)
	}
	if applied.RestrictWrites != (rec.Shell.Landlock > 0) || !slices.Equal(applied.Writable, rec.Roots) {
		t.Errorf("plan: restrict writes %v to %q; record: Landlock ABI %d, roots %q",
			applied.RestrictWrites, applied.Writable, rec.Shell.Landlock, rec.Roots)
	}
	if applied.Init != rec.Shell.ProcessesHeld || applied.Network != rec.Shell.NetworkNamespaced ||
		applied.Unprivileged != (rec.Shell.Privileges != wire.PrivilegesKept) {
		t.Errorf("plan: init %v, network %v, unprivileged %v; record: processes %v, network namespace %v, privileges %q",
			applied.Init, applied.Network, applied.Unprivileged, rec.Shell.ProcessesHeld, rec.Shell.NetworkNamespaced, rec.Shell.Privileges)
	}
	if (applied.Files == nil) != (rec.Shell.Mounts == nil) {
		t.Fatalf("plan's file view %v, record's mount layer %v", applied.Files, rec.Shell.Mounts)
	}
	if applied.Files != nil {
		// The protected git directory's parts and the workspace's pins are
		// in the plan the child applied.
		if len(applied.Files.ReadOnly) == 0 || len(applied.Files.Pinned) == 0 {
			t.Errorf("the plan's file view protects nothing: %+v", *applied.Files)
		}
		if !strings.HasSuffix(applied.Files.Record, "/session.json") {
			t.Errorf("the plan's file view keeps in sight the record %q, want this session's", applied.Files.Record)
		}
	}
}
