package supervisor

import (
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// TestSeatbeltLayers: what a macOS session records of its layers, read
// here, whatever OS runs the test: the profile holds the writes, the
// sockets and the network; there is no PID namespace, no mount layer
// and no Landlock, and the record says so rather than claim them; with
// no profile (danger-full-access, enforce: off) nothing but the terminal
// is held.
func TestSeatbeltLayers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		p         policy.Policy
		sandbox   string
		held      bool
		network   string
		terminal  bool
		processes string
	}{
		{"workspace-write, network off", policy.Policy{Mode: policy.WorkspaceWrite, Network: policy.NetworkOff},
			wire.SandboxSeatbelt, true, "off: the Seatbelt profile allows no network", true, "exec kills its process group"},
		{"read-only, allowlist", policy.Policy{Mode: policy.ReadOnly, Network: policy.NetworkAllowlist, NetworkAllow: []string{"example.com"}},
			wire.SandboxSeatbelt, true, "allowlist: the Seatbelt profile allows only the session's proxy on 127.0.0.1, which reaches example.com; com.apple.trustd.agent", false, "setsid, setpgid"},
		{"danger-full-access", policy.Policy{Mode: policy.DangerFullAccess, Network: policy.NetworkOn},
			"", false, "on: the host's network", false, "no PID namespace"},
		{"enforce off", policy.Policy{Mode: policy.WorkspaceWrite, Enforce: policy.EnforceOff, Network: policy.NetworkOff},
			"", false, "not held for the shell: enforce: off", false, "no PID namespace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sh := wire.Shell{Landlock: 6, Scoped: true}
			SeatbeltLayers(tc.p, tc.terminal, &sh)
			if sh.Sandbox != tc.sandbox || sh.Landlock != 0 || sh.Scoped || sh.Mounts != nil || sh.NetworkNamespaced {
				t.Fatalf("sandbox %q landlock %d scoped %v mounts %v netns %v: want %q and no Linux layer",
					sh.Sandbox, sh.Landlock, sh.Scoped, sh.Mounts, sh.NetworkNamespaced, tc.sandbox)
			}
			if sh.OutsideReadOnlyHeld != tc.held || sh.SocketsHeld != tc.held {
				t.Errorf("outside read-only %v, sockets %v: want %v (%s; %s)", sh.OutsideReadOnlyHeld, sh.SocketsHeld, tc.held, sh.OutsideReadOnly, sh.Sockets)
			}
			if !strings.HasPrefix(sh.Network, tc.network) {
				t.Errorf("network %q, want it to begin %q", sh.Network, tc.network)
			}
			if sh.ProcessesHeld || !strings.Contains(sh.Processes, tc.processes) || !strings.Contains(sh.Processes, "no PID namespace") {
				t.Errorf("processes %v %q: want not held, saying %q", sh.ProcessesHeld, sh.Processes, tc.processes)
			}
			if !sh.TerminalHeld || strings.Contains(sh.Terminal, "refused to the whole tree") ||
				strings.Contains(sh.Terminal, "relayed") != tc.terminal {
				t.Errorf("terminal %q: want the own terminal, TIOCSTI not claimed refused, relayed=%v", sh.Terminal, tc.terminal)
			}
			wantPriv := wire.PrivilegesKept
			if tc.held {
				wantPriv = wire.PrivilegesSeatbelt
			}
			if sh.Privileges != wantPriv {
				t.Errorf("privileges %q, want %q", sh.Privileges, wantPriv)
			}
		})
	}
}

// TestSeatbeltLayersDenyRead: policy says a Mac session holds a deny_read
// glob on every path only where the profile carries it as a regex, and
// names the one it does not carry, with why.
func TestSeatbeltLayersDenyRead(t *testing.T) {
	p := policy.Policy{Mode: policy.WorkspaceWrite, Network: policy.NetworkOff,
		DenyRead: []string{"**/.env", "/Users/*/.ssh", "**/[Ss]ecret"}}
	var sh wire.Shell
	SeatbeltLayers(p, false, &sh)
	for _, want := range []string{
		"denies reading or writing what the deny_read globs **/.env, /Users/*/.ssh cover on every path, by a regex each",
		"not held on every path, but only where the plan found their files: **/[Ss]ecret (it has a character class",
	} {
		if !strings.Contains(sh.MountsWhy, want) {
			t.Errorf("mounts: %q\nwant it to say %q", sh.MountsWhy, want)
		}
	}
	SeatbeltLayers(policy.Policy{Mode: policy.WorkspaceWrite}, false, &sh)
	if strings.Contains(sh.MountsWhy, "deny_read") {
		t.Errorf("mounts: %q: no deny_read glob, none to name", sh.MountsWhy)
	}
}
