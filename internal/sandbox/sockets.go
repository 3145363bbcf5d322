package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
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
//     (kernel.RestrictSockets): the kernel then refuses every socket made outside
//     the session's domain, whenever it was made and wherever it lies,
//     while the sockets the session makes itself keep working.
//   - Below ABI 9 the mount layer hides the sockets that exist when the
//     session starts, each behind the empty read-only file of the hidden
//     files (connect then finds no socket: ECONNREFUSED), found by the
//     walk of the writable roots and a shallow walk of where sockets live
//     (socketPlaces). A socket made later, or kept somewhere else, stays
//     reachable there: a documented gap of these kernels.

// SocketLandlock reports whether the kernel layer of a session under p
// fences pathname sockets itself (Landlock ABI 9 or newer): the mount
// layer then hides none.
func SocketLandlock(p Policy) bool {
	abi, _, err := TreeLayer(p)
	return err == nil && abi >= kernel.SocketRulesABI
}

// socketPlace is a folder where the sockets of processes outside a
// session live, and how deep beneath it the walk looks.
type socketPlace struct {
	path  string
	depth int
}

// socketPlaces are where sockets live besides the writable roots: a
// variable only so tests can name places of their own.
var socketPlaces = defaultSocketPlaces

// defaultSocketPlaces are where sockets live besides the writable roots,
// each walked to a small depth: /tmp/tmux-UID/default, /tmp/ssh-X/agent.N
// and /tmp/.X11-unix/X0 lie at depth 2, /run/user/UID/bus at 3 and
// /run/user/UID/gnupg/S.gpg-agent at 4; the home folder holds
// ~/.gnupg/S.gpg-agent and ssh's control sockets at depth 2. /tmp is not
// walked deeper: a shared /tmp holds build trees whose depth-2 folders
// alone cost milliseconds to list (1100 entries, 6 ms, on the machine
// this was measured on, against 0.4 ms for depth 2).
func defaultSocketPlaces(p Policy) []socketPlace {
	places := []socketPlace{{"/tmp", 2}, {os.TempDir(), 2}, {"/run", 4}, {"/var/run", 4}, {"/dev/shm", 2}}
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(xdg) {
		// Set by whoever started exec; it can only add a place to look.
		places = append(places, socketPlace{xdg, 3})
	}
	if p.Home != "" {
		places = append(places, socketPlace{p.Home, 2})
	}
	return places
}

// socketBudget bounds the entries the walk of all socketPlaces looks at
// together, so a /tmp full of build folders cannot stall a session's
// start: about 5 ms on a warm cache. Past it the place being walked is
// listed in Partial, and its sockets beyond are not hidden. A variable
// only so tests can lower it.
var socketBudget = 2000

// sawSocket records the socket at abs, met by a walk, as one to hide
// unless allowed.
func (pl *planner) sawSocket(abs string) {
	if pl.sockets == nil {
		pl.sockets = map[string]bool{}
	}
	pl.sockets[abs] = true
}

// socketsIn records the sockets among the entries of the folder dir.
func (pl *planner) socketsIn(dir string, entries []fs.DirEntry) {
	for _, e := range entries {
		if e.Type()&fs.ModeSocket != 0 {
			pl.sawSocket(filepath.Join(dir, e.Name()))
		}
	}
}

// planSockets completes the plan's sockets: below kernel.SocketRulesABI,
// those of the socketPlaces, to be hidden with the ones the walks of the
// roots met, but those allowed. With the Landlock right it plans none.
func (pl *planner) planSockets(p Policy) {
	if SocketLandlock(p) {
		pl.sockets = nil
		return
	}
	// The walks do not go into a folder bound read-only, where a socket
	// stays reachable: git's fsmonitor daemon listens at the top of .git.
	// Their top only, a bounded listing each.
	for _, d := range sortedKeys(pl.ro) {
		entries, _ := readDirBounded(d, 256)
		pl.socketsIn(d, entries)
	}
	pl.walkSocketPlaces(p)
	allowed := allowedSocketGlobs(p)
	for s := range pl.sockets {
		if socketAllowed(allowed, s) {
			delete(pl.sockets, s)
		}
	}
}

// walkSocketPlaces records the sockets of the socketPlaces, each folder
// once, within socketBudget.
func (pl *planner) walkSocketPlaces(p Policy) {
	budget := socketBudget
	walked := map[string]bool{}
	for _, place := range socketPlaces(p) {
		c, err := Canonical("/", place.path)
		if err != nil || walked[c] {
			continue
		}
		walked[c] = true
		if !pl.walkSocketPlace(c, place.depth, &budget) {
			pl.partial = append(pl.partial, c)
		}
	}
}

// walkSocketPlace walks top to depth levels beneath it, never following
// a symlink, recording the sockets it meets; it reports whether it saw
// everything before the budget ran out. A folder it cannot open holds
// nothing the session's user could connect to either.
func (pl *planner) walkSocketPlace(top string, depth int, budget *int) bool {
	type level struct {
		dir   string
		depth int
	}
	stack := []level{{top, 1}}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, ok := readDirBounded(d.dir, *budget)
		*budget -= len(entries)
		if !ok {
			return false
		}
		for _, e := range entries {
			abs := filepath.Join(d.dir, e.Name())
			switch t := e.Type(); {
			case t&fs.ModeSocket != 0:
				pl.sawSocket(abs)
			case t.IsDir() && d.depth < depth:
				stack = append(stack, level{abs, d.depth + 1})
			}
		}
	}
	return true
}

// allowedSocketGlobs are p's allow_unix_sockets entries, "~" expanded,
// each also with its literal folders canonical (/var/run/docker.sock is
// /run/docker.sock where /var/run is a link), as the walks name sockets.
func allowedSocketGlobs(p Policy) []string {
	var out []string
	for _, g := range p.AllowUnixSockets {
		g = p.expandHome(g)
		if !strings.HasPrefix(g, "/") {
			continue // no home: it names nothing
		}
		out = append(out, g)
		prefix, rest := literalPrefix(g)
		if c, err := Canonical("/", prefix); err == nil {
			out = append(out, strings.TrimSuffix(c, "/")+"/"+strings.Join(rest, "/"))
		}
	}
	return out
}

// socketAllowed reports whether an allowed glob covers the socket at the
// canonical path abs: names it, or a folder it lies beneath.
func socketAllowed(allowed []string, abs string) bool {
	return slices.ContainsFunc(allowed, func(g string) bool { return matchCovers(g, abs) })
}

// SocketGrants are the paths the Landlock socket right is granted on in
// a session under p (kernel.RestrictSockets): each allow_unix_sockets entry
// without wildcards, canonical, and the sockets an entry with wildcards
// covers among those of the socketPlaces when the session starts. A
// Landlock rule is made on what exists, so a socket an entry names that
// is made later is not granted.
func SocketGrants(p Policy) []string {
	allowed := allowedSocketGlobs(p)
	grants := map[string]bool{}
	wild := false
	for _, g := range allowed {
		if prefix, rest := literalPrefix(g); len(rest) == 0 {
			grants[strings.TrimSuffix(prefix, "/")] = true
		} else {
			wild = true
		}
	}
	if wild {
		pl := planner{}
		pl.walkSocketPlaces(p)
		for s := range pl.sockets {
			if socketAllowed(allowed, s) {
				grants[s] = true
			}
		}
	}
	return nonNil(sortedKeys(grants))
}

// hideSockets binds the empty read-only file empty (an O_PATH
// descriptor) over each socket of sockets. A socket gone since the plan
// is skipped: there is nothing left to reach at its path. Anything else
// there now (a symlink, a file) fails: the plan no longer holds.
func hideSockets(empty int, sockets []string) error {
	for _, s := range sockets {
		if err := hideSocket(empty, s); err != nil {
			return mountErr("hide socket", s, err)
		}
	}
	return nil
}

func hideSocket(empty int, path string) error {
	tfd, err := OpenNoSymlinks(path, unix.O_PATH)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	var st unix.Stat_t
	if err := unix.Fstat(tfd, &st); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		return errors.New("changed since the plan")
	}
	if classicMounts {
		return bindReadOnlyClassic(empty, tfd)
	}
	// A regular file may cover any inode that is not a folder, a
	// socket's included.
	tree, err := unix.OpenTree(empty, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
	if errors.Is(err, unix.ENOSYS) {
		return bindReadOnlyClassic(empty, tfd)
	}
	if err != nil {
		return fmt.Errorf("open_tree: %w", err)
	}
	defer unix.Close(tree)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		return fmt.Errorf("mount_setattr: %w", err)
	}
	if err := unix.MoveMount(tree, "", tfd, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return nil
}
