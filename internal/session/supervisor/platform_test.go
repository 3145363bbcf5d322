package supervisor

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// exec refuses WSL1, named, with what to do (WSL2), from what the kernel
// says of itself there; WSL2 and any other kernel are not refused, nor
// is a policy that asks for no fence.
func TestWSLRefusal(t *testing.T) {
	const wsl1 = "4.4.0-19041-Microsoft"
	const wsl2 = "5.15.153.1-microsoft-standard-WSL2"
	ws := policy.Policy{Mode: policy.WorkspaceWrite, Enforce: policy.EnforceAuto}
	err := wslRefusal(ws, kernel.WSLVersion(wsl1))
	if fserr.CodeOf(err) != fserr.ConfigInvalid || !strings.Contains(err.Error(), "this is WSL1") || !strings.Contains(err.Error(), "run dsh-fs inside WSL2") {
		t.Errorf("WSL1: %v (%s), want FS_CONFIG_INVALID naming WSL1 and WSL2", err, fserr.CodeOf(err))
	}
	ro := ws
	ro.Mode = policy.ReadOnly
	if wslRefusal(ro, kernel.WSLVersion(wsl1)) == nil {
		t.Error("WSL1, read-only: not refused")
	}
	for _, tc := range []struct {
		name    string
		p       policy.Policy
		release string
	}{
		{"WSL2", ws, wsl2},
		{"another kernel", ws, "6.8.0-45-generic"},
		{"WSL1, enforce: off", policy.Policy{Mode: policy.WorkspaceWrite, Enforce: policy.EnforceOff}, wsl1},
		{"WSL1, danger-full-access", policy.Policy{Mode: policy.DangerFullAccess, Enforce: policy.EnforceAuto}, wsl1},
	} {
		if err := wslRefusal(tc.p, kernel.WSLVersion(tc.release)); err != nil {
			t.Errorf("%s: refused: %v", tc.name, err)
		}
	}
}

// exec on Windows refuses, FS_CONFIG_INVALID, and names WSL2; on Linux
// and macOS Unavailable lets exec go on.
func TestUnavailableOn(t *testing.T) {
	err := unavailableOn("windows")
	if fserr.CodeOf(err) != fserr.ConfigInvalid || !strings.Contains(err.Error(), "dsh-fs exec does not run on Windows") ||
		!strings.Contains(err.Error(), "run dsh-fs inside WSL2") {
		t.Errorf("windows: %v (%s)", err, fserr.CodeOf(err))
	}
	for _, goos := range []string{"linux", "darwin"} {
		if err := unavailableOn(goos); err != nil {
			t.Errorf("%s: %v", goos, err)
		}
	}
}
