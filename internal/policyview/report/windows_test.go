package report

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// TestShellLayersOnWindows: policy's shell lines on Windows, read on any
// OS by passing it: the shell is not fenced, every line says dsh-fs exec
// does not run there and to run it inside WSL2, never a Linux or macOS
// layer, and the writes line says what the file tool holds instead.
func TestShellLayersOnWindows(t *testing.T) {
	p := policy.Policy{Mode: policy.WorkspaceWrite, Network: policy.NetworkOff}
	l := newShellLayersOn("windows", &config.Settings{Policy: p})
	if l.WritesFenced || l.ProtectedHeld || l.DenyReadHeld || l.NetworkHeld || l.ProcessesHeld || l.SocketsHeld {
		t.Errorf("%+v: want nothing held for the shell", l)
	}
	if !strings.HasPrefix(l.Writes, "not fenced: dsh-fs exec does not run on Windows; run dsh-fs inside WSL2") ||
		!strings.Contains(l.Writes, "the file tool holds the fence for its own calls only: writes only beneath the writable roots") {
		t.Errorf("writes: %q", l.Writes)
	}
	for name, line := range map[string]string{"protected": l.Protected, "deny_read": l.DenyRead, "network": l.Network,
		"processes": l.Processes, "caches": l.Caches, "terminal": l.Terminal} {
		if !strings.Contains(line, "WSL2") || strings.Contains(line, "Landlock") || strings.Contains(line, "Seatbelt") || strings.Contains(line, "would") {
			t.Errorf("%s: %q: want WSL2 named, no layer of another OS", name, line)
		}
	}
	if ro := newShellLayersOn("windows", &config.Settings{Policy: policy.Policy{Mode: policy.ReadOnly}}); !strings.HasSuffix(ro.Writes, "only: no writes") {
		t.Errorf("read-only writes: %q", ro.Writes)
	}
	// The block a harness gives the model says so too, and claims no
	// network setting for the shell.
	short := policyview.Short(p, []sandbox.Root{{Path: `C:\ws`, Origin: "cwd"}}, policyview.Shell{NoExec: noExecOn("windows")})
	if !strings.Contains(short, "shell: not fenced (dsh-fs exec does not run on Windows; run dsh-fs inside WSL2") ||
		!strings.Contains(short, "network not held for the shell") || strings.Contains(short, "network off") {
		t.Errorf("short block:\n%s", short)
	}
	if noExecOn("linux") != "" || noExecOn("darwin") != "" {
		t.Error("noExecOn names another OS than windows")
	}
}
