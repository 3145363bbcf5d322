package report

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestShellLayersOnMacOS: policy's shell lines on macOS, read on any OS
// by passing it: outside a session, nothing holds and each line says
// what the Seatbelt profile would hold, never a Linux layer (Landlock, a
// PID namespace); inside a macOS session, the record's Seatbelt layers
// are reported as held where the profile holds them, and processes as
// killed by process group, not held.
func TestShellLayersOnMacOS(t *testing.T) {
	p := policy.Policy{Mode: policy.WorkspaceWrite, Network: policy.NetworkOff}
	outside := newShellLayersOn("darwin", &config.Settings{Policy: p})
	for name, line := range map[string]string{"writes": outside.Writes, "protected": outside.Protected,
		"deny_read": outside.DenyRead, "network": outside.Network} {
		if !strings.Contains(line, "Seatbelt") || strings.Contains(line, "Landlock ABI") {
			t.Errorf("outside a session, %s: %q: want the Seatbelt profile's, no Landlock", name, line)
		}
	}
	if outside.WritesFenced || outside.ProcessesHeld || !strings.Contains(outside.Processes, "process group") {
		t.Errorf("outside a session: writes fenced %v, processes %v %q: want nothing held, the process group said",
			outside.WritesFenced, outside.ProcessesHeld, outside.Processes)
	}

	rec := &wire.Record{Roots: []string{"/Users/me/ws"}}
	supervisor.SeatbeltLayers(p, true, &rec.Shell)
	inside := newShellLayersOn("darwin", &config.Settings{Policy: p, Session: rec, SessionPath: "/rec"})
	if !inside.WritesFenced || inside.Writes != "the Seatbelt profile: writes only beneath /Users/me/ws" {
		t.Errorf("writes %v %q", inside.WritesFenced, inside.Writes)
	}
	if !inside.ProtectedHeld || !inside.DenyReadHeld || !inside.OutsideReadOnlyHeld || !inside.SocketsHeld || !inside.NetworkHeld {
		t.Errorf("protected %v, deny_read %v, outside %v, sockets %v, network %v: want each held by the profile",
			inside.ProtectedHeld, inside.DenyReadHeld, inside.OutsideReadOnlyHeld, inside.SocketsHeld, inside.NetworkHeld)
	}
	if inside.ProcessesHeld || inside.ScopesHeld || !strings.Contains(inside.Scopes, "no Landlock scopes") ||
		!strings.Contains(inside.Privileges, "Seatbelt") {
		t.Errorf("processes %v, scopes %v %q, privileges %q: want no PID namespace or scopes claimed, the profile's privileges",
			inside.ProcessesHeld, inside.ScopesHeld, inside.Scopes, inside.Privileges)
	}
}
