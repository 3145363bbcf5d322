package layout

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// The socket layer of a dsh-fs exec session (docs/design.md §10): no
// pathname unix socket of a process outside the session is reachable
// from its shell, unless the trusted allow_unix_sockets names it. A
// socket is a door out of every other layer: a tmux server runs what a
// client asks, unconfined; an ssh-agent signs with keys deny_read hides;
// the D-Bus session bus starts programs; docker.sock is root.
//
// Two mechanisms, by kernel:
//
//   - Landlock ABI 9 and newer has a right for connect(2) and sendmsg(2)
//     on pathname sockets (resolve unix). The session's child handles it
//     in a ruleset of its own and grants it only on the allowed sockets
//     (kernel.SocketsRuleset): the kernel then refuses every socket made outside
//     the session's domain, whenever it was made and wherever it lies,
//     while the sockets the session makes itself keep working.
//   - Below ABI 9 the mount layer hides the sockets bound when the
//     session starts, each behind the empty read-only file of the hidden
//     files (connect then finds no socket: ECONNREFUSED). They are the
//     kernel's own list of bound unix sockets (/proc/self/net/unix), read
//     by exec before the session's namespaces are made: no walk, so
//     nothing a session leaves on disk decides what a later one hides.
//     The list holds the sockets of exec's network namespace only; a
//     socket bound later, or bound in another network namespace (a
//     container's, another session's), stays reachable there: a
//     documented gap of these kernels.

// SocketLandlock reports whether the kernel layer of a session under p
// fences pathname sockets itself (Landlock ABI 9 or newer): the mount
// layer then hides none.
func SocketLandlock(p policy.Policy) bool {
	abi, _, err := TreeLayer(p)
	return err == nil && abi >= kernel.SocketRulesABI
}

// parseNetUnix returns the pathname sockets of a /proc/net/unix listing,
// sorted, each once. A line is "Num: RefCount Protocol Flags Type St
// Inode" and, for a bound socket, one space and the path as bound (an
// abstract name starts with "@"). A path holding a newline spans lines:
// the kernel prints it raw. A line that is not a record is refused,
// since the rest of a path would go unseen.
func parseNetUnix(data string) ([]string, error) {
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	set := map[string]bool{}
	for i, line := range lines {
		if i == 0 && strings.HasPrefix(line, "Num") {
			continue
		}
		rest, ok := line, true
		for f := range 7 {
			var field string
			field, rest, _ = strings.Cut(strings.TrimLeft(rest, " "), " ")
			ok = ok && field != "" && (f > 0 || strings.HasSuffix(field, ":"))
		}
		if !ok {
			return nil, fmt.Errorf("/proc/net/unix: line %d is not a socket's: %q", i+1, line)
		}
		if rest == "" || strings.HasPrefix(rest, "@") {
			continue // unbound, or abstract
		}
		set[rest] = true
	}
	return sortedKeys(set), nil
}

// planSockets completes the plan's sockets: below kernel.SocketRulesABI,
// those of the kernel's list that are bound where the shell could reach
// them, but the allowed ones; what cannot be covered is named in
// SocketsLeft. With the Landlock right it plans none.
func (pl *planner) planSockets(p policy.Policy) {
	if SocketLandlock(p) {
		return
	}
	bound, err := pl.boundSockets()
	if err != nil {
		pl.socketsUnread = err.Error()
		return
	}
	allowed := allowedSocketGlobs(p)
	for _, s := range bound {
		abs, why := socketAt(s)
		switch {
		case why != "":
			pl.socketsLeft = append(pl.socketsLeft, s+" ("+why+")")
		case socketAllowed(allowed, abs):
		default:
			if pl.sockets == nil {
				pl.sockets = map[string]bool{}
			}
			pl.sockets[abs] = true
		}
	}
}

// socketAt is the canonical path of the socket bound at path, or why
// there is none to cover: bound at a relative path (from a folder the
// list does not say), no socket at its path now (removed, or moved: a
// moved one is not covered where it lies), or a folder on the way this
// user cannot search (the session's user cannot reach it either).
func socketAt(path string) (abs, why string) {
	if !filepath.IsAbs(path) {
		return "", "bound at a relative path"
	}
	dir, err := sandbox.Canonical("/", filepath.Dir(path))
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return "", "not reachable by this user"
		}
		return "", "no socket at its path"
	}
	abs = filepath.Join(dir, filepath.Base(path))
	switch fi, err := os.Lstat(abs); {
	case errors.Is(err, fs.ErrPermission):
		return "", "not reachable by this user"
	case err != nil || fi.Mode().Type() != fs.ModeSocket:
		return "", "no socket at its path"
	}
	return abs, ""
}

// SocketsOpen reports whether a socket of the kernel's list may be
// reachable from the shell of a session planned as m although the mount
// layer hides sockets: the list could not be read, or a socket was bound
// at a relative path, which cannot be found.
func (m MountPlan) SocketsOpen() bool {
	if m.SocketsUnread != "" {
		return true
	}
	return slices.ContainsFunc(m.SocketsLeft, func(s string) bool { return strings.HasSuffix(s, "(bound at a relative path)") })
}

// allowedSocketGlobs are p's allow_unix_sockets entries, "~" expanded,
// each also with its literal folders canonical (/var/run/docker.sock is
// /run/docker.sock where /var/run is a link), as the walks name sockets.
func allowedSocketGlobs(p policy.Policy) []string {
	var out []string
	for _, g := range p.AllowUnixSockets {
		g = p.ExpandHome(g)
		if !strings.HasPrefix(g, "/") {
			continue // no home: it names nothing
		}
		out = append(out, g)
		prefix, rest := pathmatch.LiteralPrefix(g)
		if c, err := sandbox.Canonical("/", prefix); err == nil {
			out = append(out, strings.TrimSuffix(c, "/")+"/"+strings.Join(rest, "/"))
		}
	}
	return out
}

// socketAllowed reports whether an allowed glob covers the socket at the
// canonical path abs: names it, or a folder it lies beneath.
func socketAllowed(allowed []string, abs string) bool {
	return slices.ContainsFunc(allowed, func(g string) bool { return pathmatch.Covers(g, abs) })
}

// SocketGrants are the paths the Landlock socket right is granted on in
// a session under p (kernel.SocketsRuleset): each allow_unix_sockets entry
// without wildcards, canonical, and the sockets of the kernel's list that
// an entry with wildcards covers when the session starts. A Landlock rule
// is made on what exists, so a socket an entry names that is made later
// is not granted.
func SocketGrants(p policy.Policy) []string { return grantSockets(p, readBoundSockets) }

// grantSockets is SocketGrants with the kernel's list read by
// boundSockets.
func grantSockets(p policy.Policy, boundSockets func() ([]string, error)) []string {
	allowed := allowedSocketGlobs(p)
	grants := map[string]bool{}
	wild := false
	for _, g := range allowed {
		if prefix, rest := pathmatch.LiteralPrefix(g); len(rest) == 0 {
			grants[strings.TrimSuffix(prefix, "/")] = true
		} else {
			wild = true
		}
	}
	if wild {
		bound, _ := boundSockets()
		for _, s := range bound {
			if abs, why := socketAt(s); why == "" && socketAllowed(allowed, abs) {
				grants[abs] = true
			}
		}
	}
	return nonNil(sortedKeys(grants))
}
