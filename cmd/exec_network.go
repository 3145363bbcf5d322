package cmd

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/pkg/sandbox"
	"github.com/dshfs/dsh-fs/pkg/session"
)

// networkLayer decides the network of a session under p (docs/design.md
// §10, network): whether its shell gets a network namespace of its own,
// whether the setting holds, and the text policy shows. mounts says the
// session has the mount layer's namespaces (a user namespace where not
// root), in which the network namespace is made too; as root one is
// made without them.
func networkLayer(p sandbox.Policy, mounts bool) (namespaced, held bool, text string) {
	if p.Network == sandbox.NetworkOn {
		return false, true, "on: the host's network, every address it reaches"
	}
	if !mounts && os.Geteuid() != 0 {
		return false, false, "not held for the shell: network " + string(p.Network) +
			" needs a network namespace, and without the mount layer's user namespace a user that is not root cannot make one"
	}
	return true, true, "off: a network namespace of its own with only loopback; nothing leaves it, not even to the host's 127.0.0.1"
}

// withNetworkNamespace gives the child attr starts a network namespace
// of its own: in the user namespace attr makes, where there is one, with
// CAP_NET_ADMIN there to bring loopback up (cleared before CMD, as the
// mount layer's capabilities are).
func withNetworkNamespace(attr *syscall.SysProcAttr) {
	attr.Cloneflags |= syscall.CLONE_NEWNET
	if attr.Cloneflags&syscall.CLONE_NEWUSER != 0 {
		attr.AmbientCaps = append(attr.AmbientCaps, unix.CAP_NET_ADMIN)
	}
}

// networkOutsideText is policy's network line outside a session: what
// dsh-fs exec would do here.
func networkOutsideText(p sandbox.Policy) string {
	if p.Network == sandbox.NetworkOn {
		return "on: the host's network, every address it reaches"
	}
	_, held, text := networkLayer(p, sandbox.UserNamespace() && func() bool { ok, _ := sandbox.MountLayer(); return ok }())
	if !held {
		return "not held for the shell: no dsh-fs exec session (dsh-fs exec could not here: " + strings.TrimPrefix(text, "not held for the shell: ") + ")"
	}
	return "not held for the shell: no dsh-fs exec session (dsh-fs exec would give it " + strings.SplitN(text, ": ", 2)[1] + ")"
}

// networkRecordText is policy's network line from a session's record.
func networkRecordText(sh session.Shell) (bool, string) {
	if sh.Network == "" {
		return false, "not held for the shell: the session's record says nothing of the network"
	}
	return sh.NetworkHeld, sh.Network
}

// networkContextLine is the network line of the sandbox:policy block.
func networkContextLine(p sandbox.Policy) string {
	switch p.Network {
	case sandbox.NetworkOn:
		return "network (dsh-fs exec shell): on, any host\n"
	case sandbox.NetworkAllowlist:
		allow := "none"
		if len(p.NetworkAllow) > 0 {
			allow = strings.Join(p.NetworkAllow, ", ")
		}
		return fmt.Sprintf("network (dsh-fs exec shell): only through the session's proxy (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY) to %s; other hosts get 403 naming the host and network_allow\n", allow)
	}
	return "network (dsh-fs exec shell): off; no host is reachable, not even the host's 127.0.0.1\n"
}
