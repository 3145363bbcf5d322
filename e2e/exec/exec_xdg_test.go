//go:build unix

package exec

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestExecUserWithoutXDGRuntimeDir: an ordinary user whose environment
// lacks XDG_RUNTIME_DIR (after su, in a CI job, a container's exec) but
// who has the private runtime folder /run/user/UID gets a session: the
// record's place comes from the uid, and the folder is checked as it is
// when the variable names it. Before, exec failed with "XDG_RUNTIME_DIR
// is not set".
func TestExecUserWithoutXDGRuntimeDir(t *testing.T) {
	requireUserNamespaces(t)
	bin, ws, system := unprivilegedSession(t, map[string]string{"a.txt": "a\n"})
	runtime := agentRuntimeDir(t) // /run/user/UID exists, the user's, 0700
	indexes := filepath.Join(runtime, "dsh-fs", "index")
	start := time.Now().Add(-time.Second)
	c := exec.Command(bin, "exec", "--cwd", ws, "--tmp=false", "--", "sh", "-c", `dsh-fs stat a.txt; echo "stat=$?"`)
	c.Dir = ws
	c.Env = slices.DeleteFunc(agentExecEnv(t, bin, system), func(v string) bool { return strings.HasPrefix(v, "XDG_RUNTIME_DIR=") })
	asAgent(t, c)
	out, err := c.CombinedOutput()
	if err != nil {
		t.Fatalf("exec as %s without XDG_RUNTIME_DIR: %v\n%s", agentUserName, err, out)
	}
	for _, want := range []string{`"ok":true,"op":"stat","path":"a.txt"`, "stat=0"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	// The roots' tree index is kept in the same runtime folder, found
	// the same way: a new workspace adds its index file there (one that
	// names the workspace, written since the session started: the store
	// is bounded, so counting its files says nothing).
	if !indexNamesRoot(indexes, ws, start) {
		t.Errorf("no tree index kept for the workspace %s in %s", ws, indexes)
	}
}

// indexNamesRoot reports whether a file of the index folder dir, written
// since start, holds root's path: its index.
func indexNamesRoot(dir, root string, start time.Time) bool {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !strings.HasPrefix(e.Name(), "tree-") || info.ModTime().Before(start) {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil && bytes.Contains(b, []byte(root)) {
			return true
		}
	}
	return false
}
