package supervisor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// networkPlan is how a session holds its network setting.
type networkPlan struct {
	// namespaced: the shell gets a network namespace of its own.
	namespaced bool
	held       bool
	text       string
	// missing, when not "", is why the network setting cannot be held
	// here: exec refuses to start (networkMissing).
	missing string
}

// networkMissing is exec's error for a network setting it cannot hold.
func networkMissing(p policy.Policy, missing string) error {
	return fserr.New(fserr.ConfigInvalid, "exec: network "+string(p.Network)+" cannot be held here: "+missing+
		"\nhint: network: on, a mode with the mount layer (workspace-write, read-only) where user namespaces are allowed, or run as root")
}

// networkLayer decides the network of a session under p (docs/design.md
// §10, network) and the text policy shows. mounts says the session has
// the mount layer's namespaces (a user namespace where not root), in
// which the network namespace is made too; as root one is made without
// them. withInit says the session has its own init (its first process,
// rawinit), beside which the allowlist's bridge to the proxy runs:
// without one, allowlist is off. Where no namespace can be made, the
// setting cannot be held (missing), unless enforce is off: no fallback
// holds it whole (Landlock's TCP rules grant a port to every address,
// and miss UDP and io_uring's sockets).
func networkLayer(p policy.Policy, mounts, withInit bool) networkPlan {
	if p.Network == policy.NetworkOn {
		return networkPlan{held: true, text: "on: the host's network, every address it reaches"}
	}
	allow := "no host"
	if len(p.NetworkAllow) > 0 {
		allow = strings.Join(p.NetworkAllow, ", ")
	}
	reach := "it reaches only " + allow + ", and a loopback, private or link-local address only when an entry names it"
	if len(p.NetworkAllowCommands) > 0 {
		reach += "; network_allow_commands grants " + strings.Join(p.NetworkAllowCommands, ", ") + " to that program's processes while it runs"
	}
	if p.NetworkApproval.Asks() {
		reach += "; another host is put to the approver (network_approval " + string(p.NetworkApproval) + ") once for the session"
	}
	if p.NetworkUpstreamProxy != "" {
		reach += "; through the upstream proxy " + p.NetworkUpstreamProxy
	} else {
		reach += "; through the upstream proxy exec's own HTTPS_PROXY or HTTP_PROXY names, if any"
	}
	if !mounts && os.Geteuid() != 0 {
		nsWhy := "no network namespace: without the mount layer's user namespace a user that is not root cannot make one"
		if p.Mode == policy.DangerFullAccess {
			nsWhy = "no network namespace: danger-full-access has no mount layer, whose user namespace a user that is not root needs for one"
		}
		text := "not held for the shell: network " + string(p.Network) + " needs a network namespace, and " + nsWhy[len("no network namespace: "):]
		if p.Enforce == policy.EnforceOff {
			return networkPlan{text: text + " (enforce: off)"}
		}
		return networkPlan{text: text, missing: nsWhy}
	}
	off := "a network namespace of its own with only loopback; nothing leaves it, not even to the host's 127.0.0.1"
	if p.Network == policy.NetworkAllowlist {
		if !withInit {
			return networkPlan{namespaced: true, held: true, text: "off (allowlist needs the session's PID namespace, where the bridge to the proxy runs): " + off}
		}
		return networkPlan{namespaced: true, held: true, text: "allowlist: a network namespace of its own with only loopback, where HTTP_PROXY, HTTPS_PROXY and ALL_PROXY name the session's proxy (HTTP, CONNECT, SOCKS5), run by the supervisor; " + reach}
	}
	return networkPlan{namespaced: true, held: true, text: "off: " + off}
}

// upstreamCredentials reads the upstream's credentials from file, which
// a deny_read entry must hide from the session: the supervisor alone
// reads it. Its errors never quote what it holds.
func upstreamCredentials(p policy.Policy, file string) (string, error) {
	bad := func(why string) error {
		return fserr.New(fserr.ConfigInvalid, "exec: network_upstream_proxy_auth_file "+file+": "+why)
	}
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", bad(err.Error())
	}
	if !sandbox.NewFence(p).ReadDenied(real) {
		return "", bad("the session could read it\nhint: add it to deny_read in a trusted file")
	}
	f, err := os.Open(real)
	if err != nil {
		return "", bad(err.Error())
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return "", bad(err.Error())
	}
	cred := strings.TrimSpace(string(data))
	if !strings.Contains(cred, ":") || strings.ContainsAny(cred, "\r\n") {
		return "", bad("want one line user:password")
	}
	return cred, nil
}

// networkRefusal is the line exec writes to its standard error for each
// connection the proxy refused.
type networkRefusal struct {
	Op      string         `json:"op"`
	Network networkRefused `json:"network_refused"`
}

type networkRefused struct {
	Host    string `json:"host"`
	Port    int    `json:"port"`
	Why     string `json:"why"`
	Setting string `json:"setting"`
}

// NetworkOutsideText is policy's network line outside a session: what
// dsh-fs exec would do here.
func NetworkOutsideText(p policy.Policy) string {
	if p.Network == policy.NetworkOn {
		return "on: the host's network, every address it reaches"
	}
	mounts := p.Mode != policy.DangerFullAccess && func() bool { ok, _ := layout.MountLayer(); return ok }()
	plan := networkLayer(p, mounts && (os.Geteuid() == 0 || layout.UserNamespace()), mounts)
	switch {
	case plan.namespaced:
		return "not held for the shell: no dsh-fs exec session (dsh-fs exec would give it " + strings.SplitN(plan.text, ": ", 2)[1] + ")"
	case plan.missing != "":
		return "not held for the shell: no dsh-fs exec session (dsh-fs exec refuses to start here: " + plan.missing + ")"
	}
	return "not held for the shell: no dsh-fs exec session (dsh-fs exec could not here: " + strings.TrimPrefix(plan.text, "not held for the shell: ") + ")"
}

// NetworkRecordText is policy's network line from a session's record.
func NetworkRecordText(sh wire.Shell) (bool, string) {
	if sh.Network == "" {
		return false, "not held for the shell: the session's record says nothing of the network"
	}
	return sh.NetworkHeld, sh.Network
}

// NetworkContextLine is the network line of the sandbox:policy block.
func NetworkContextLine(p policy.Policy) string {
	switch p.Network {
	case policy.NetworkOn:
		return "network (dsh-fs exec shell): on, any host\n"
	case policy.NetworkAllowlist:
		allow := "none"
		if len(p.NetworkAllow) > 0 {
			allow = strings.Join(p.NetworkAllow, ", ")
		}
		others := "other hosts get 403 naming the host and network_allow"
		if p.NetworkApproval.Asks() {
			others = "another host is put to the approver once, else gets 403 naming the host and network_allow"
		}
		return fmt.Sprintf("network (dsh-fs exec shell): only through the session's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) to %s; %s\n", allow, others)
	}
	return "network (dsh-fs exec shell): off; no host is reachable, not even the host's 127.0.0.1\n"
}
