package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// TestNetworkSetting: network follows the mode by default, trusted files
// set it, the managed requirements cap it, and a session source only
// narrows it (on → allowlist → off) and only drops network_allow entries.
func TestNetworkSetting(t *testing.T) {
	want := func(n policy.Network, allow ...string) func(t *testing.T, s *Settings) {
		return func(t *testing.T, s *Settings) {
			t.Helper()
			if s.Policy.Network != n {
				t.Errorf("network %s, want %s", s.Policy.Network, n)
			}
			if allow == nil {
				allow = []string{}
			}
			if !slices.Equal(s.Policy.NetworkAllow, allow) {
				t.Errorf("network_allow %q, want %q", s.Policy.NetworkAllow, allow)
			}
		}
	}
	allowlist := "network: allowlist\nnetwork_allow: [example.com, \"*.example.org:443\", 127.0.0.1]\n"
	for _, tc := range []loadCase{
		{name: "default workspace-write", check: want(policy.NetworkOff)},
		{name: "default read-only", flags: []string{"--mode", "read-only"}, check: want(policy.NetworkOff)},
		{name: "default danger-full-access", system: "mode: danger-full-access\n", check: want(policy.NetworkOn)},
		{name: "the default follows a narrowed mode", system: "mode: danger-full-access\n", flags: []string{"--mode", "workspace-write"}, check: want(policy.NetworkOff)},
		{name: "YAML off and on are names, not booleans", system: "network: on\n", check: want(policy.NetworkOn)},
		{name: "trusted allowlist", system: allowlist, check: want(policy.NetworkAllowlist, "example.com", "*.example.org:443", "127.0.0.1")},
		{name: "trusted off in danger-full-access", system: "mode: danger-full-access\nnetwork: off\n", check: want(policy.NetworkOff)},
		{name: "managed caps the user's on", user: "network: on\n", requirements: "network: allowlist\n", check: want(policy.NetworkAllowlist)},
		{name: "managed does not open", user: "network: off\n", requirements: "network: on\n", check: want(policy.NetworkOff)},

		{name: "session narrows on to allowlist", system: "network: on\nnetwork_allow: [example.com]\n", session: "network: allowlist\n", check: want(policy.NetworkAllowlist, "example.com")},
		{name: "session narrows allowlist to off", system: allowlist, session: "network: off\n", check: want(policy.NetworkOff, "example.com", "*.example.org:443", "127.0.0.1")},
		{name: "session drops an entry", system: allowlist, session: "network_allow: [example.com]\n", check: want(policy.NetworkAllowlist, "example.com")},
		{name: "session on under trusted off", system: "network: off\n", session: "network: on\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: network"},
		{name: "session on under the default", session: "network: on\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: network"},
		{name: "session allowlist under off", system: "network: off\n", session: "network: allowlist\n", reason: policy.ReasonSessionWiden},
		{name: "session on under allowlist", system: allowlist, session: "network: on\n", reason: policy.ReasonSessionWiden},
		{name: "session adds an entry", system: allowlist, session: "network_allow: [example.com, evil.test]\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: network_allow"},

		{name: "unknown network", system: "network: maybe\n", code: fserr.ConfigInvalid},
		{name: "bad entry", system: "network_allow: [\"exa mple.com\"]\n", code: fserr.ConfigInvalid},
		{name: "bad port", system: "network_allow: [\"example.com:99999\"]\n", code: fserr.ConfigInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}

// TestNetworkApprovalSetting: who is asked about a host network_allow
// does not name is none unless a trusted source says otherwise, whatever
// approval is; command needs approval_command; a session source may
// only say none.
func TestNetworkApprovalSetting(t *testing.T) {
	want := func(a policy.NetworkApproval) func(t *testing.T, s *Settings) {
		return func(t *testing.T, s *Settings) {
			t.Helper()
			if s.Policy.NetworkApproval != a {
				t.Errorf("network_approval %q, want %q", s.Policy.NetworkApproval, a)
			}
		}
	}
	command := "approval: command\napproval_command: [/bin/true]\n"
	for _, tc := range []loadCase{
		{name: "default", check: want(policy.NetworkApprovalNone)},
		{name: "approval command asks no host", system: command, check: want(policy.NetworkApprovalNone)},
		{name: "trusted command", system: command + "network_approval: command\n", check: want(policy.NetworkApprovalCommand)},
		{name: "trusted supervisor", system: "network_approval: supervisor\n", check: want(policy.NetworkApprovalSupervisor)},
		{name: "managed sets it", user: "network_approval: supervisor\n", requirements: "network_approval: none\n", check: want(policy.NetworkApprovalNone)},
		{name: "command without approval_command", system: "network_approval: command\n", code: fserr.ConfigInvalid},
		{name: "unknown", system: "network_approval: maybe\n", code: fserr.ConfigInvalid},

		{name: "session narrows to none", system: "network_approval: supervisor\n", session: "network_approval: none\n", check: want(policy.NetworkApprovalNone)},
		{name: "session keeps it", system: "network_approval: supervisor\n", session: "network_approval: supervisor\n", check: want(policy.NetworkApprovalSupervisor)},
		{name: "session asks", system: command, session: "network_approval: command\n", reason: policy.ReasonSessionWiden, matched: "file $ROOT/session.yaml: network_approval"},
		{name: "session changes who", system: command + "network_approval: command\n", session: "network_approval: supervisor\n", reason: policy.ReasonSessionWiden},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}

// TestNetworkUpstreamAndCommandSettings: the upstream proxy, its
// NO_PROXY list and the command grants come from trusted files alone (a
// session source setting any of them is refused, whatever the value);
// an upstream URL with credentials is refused, its message not quoting
// them; a grant is COMMAND=HOST.
func TestNetworkUpstreamAndCommandSettings(t *testing.T) {
	want := func(up string, noProxy, cmds []string) func(t *testing.T, s *Settings) {
		return func(t *testing.T, s *Settings) {
			t.Helper()
			p := s.Policy
			if p.NetworkUpstreamProxy != up || !slices.Equal(p.NetworkUpstreamNoProxy, noProxy) || !slices.Equal(p.NetworkAllowCommands, cmds) {
				t.Errorf("upstream %q, no proxy %q, commands %q; want %q %q %q", p.NetworkUpstreamProxy, p.NetworkUpstreamNoProxy, p.NetworkAllowCommands, up, noProxy, cmds)
			}
		}
	}
	trusted := "network_upstream_proxy: http://proxy.test:3128\nnetwork_upstream_no_proxy: [.corp.test]\nnetwork_allow_commands: [\"go=proxy.golang.org\", \"/usr/bin/cargo=*.crates.io:443\"]\n"
	for _, tc := range []loadCase{
		{name: "defaults", check: want("", []string{}, []string{})},
		{name: "trusted", system: trusted, check: want("http://proxy.test:3128", []string{".corp.test"}, []string{"go=proxy.golang.org", "/usr/bin/cargo=*.crates.io:443"})},
		{name: "session upstream", session: "network_upstream_proxy: http://evil.test:3128\n", reason: policy.ReasonSessionWiden},
		{name: "session repeats the trusted upstream", system: trusted, session: "network_upstream_proxy: http://proxy.test:3128\n", reason: policy.ReasonSessionWiden},
		{name: "session no proxy", session: "network_upstream_no_proxy: [evil.test]\n", reason: policy.ReasonSessionWiden},
		{name: "session grant", session: "network_allow_commands: [\"sh=evil.test\"]\n", reason: policy.ReasonSessionWiden},
		{name: "credentials in the URL", system: "network_upstream_proxy: http://alice:s3cret@proxy.test:3128\n", code: fserr.ConfigInvalid},
		{name: "https upstream", system: "network_upstream_proxy: https://proxy.test:3128\n", code: fserr.ConfigInvalid},
		{name: "grant without a host", system: "network_allow_commands: [go]\n", code: fserr.ConfigInvalid},
		{name: "grant of a relative path", system: "network_allow_commands: [\"bin/go=proxy.golang.org\"]\n", code: fserr.ConfigInvalid},
		{name: "grant of a bad host", system: "network_allow_commands: [\"go=exa mple.com\"]\n", code: fserr.ConfigInvalid},
		{name: "session credentials file", session: "network_upstream_proxy_auth_file: /tmp/cred\n", reason: policy.ReasonSessionWiden},
		{name: "relative credentials file", system: "network_upstream_proxy_auth_file: cred\n", code: fserr.ConfigInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) { checkLoad(t, tc) })
	}
}

// TestUpstreamCredentialsNotQuoted: the refusal of an upstream URL with
// credentials says why without them.
func TestUpstreamCredentialsNotQuoted(t *testing.T) {
	err := validate(KeyNetworkUpstreamProxy, "http://alice:s3cret@proxy.test:3128")
	if err == nil || strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "alice") {
		t.Errorf("want a refusal that does not quote the credentials, got %v", err)
	}
}
