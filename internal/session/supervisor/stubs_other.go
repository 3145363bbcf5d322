//go:build unix && !linux

package supervisor

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// What a Linux session has and a session here does not: a child that
// applies the plan (runChild), the user-namespace and overlay probes
// (probeUserNamespace, probeOverlays), mount identities. Each says so;
// none is reached by a session here, whose layers are SeatbeltLayers'.

// errNoNamespaces says there are no namespaces here to probe.
var errNoNamespaces = errors.New("no user or mount namespaces on " + runtime.GOOS)

// runChild has no child to be here: a session here has none.
func runChild() int {
	fmt.Fprintln(os.Stderr, "dsh-fs: exec's child exists on Linux alone")
	return statusFailed
}

// userNamespaceProbe probes nothing here.
func userNamespaceProbe() int {
	fmt.Fprintln(os.Stderr, errNoNamespaces)
	return statusFailed
}

// cachesProbe probes nothing here.
func cachesProbe() int {
	fmt.Fprintln(os.Stderr, errNoNamespaces)
	return statusFailed
}

// probeUserNamespace is errNoNamespaces here.
func probeUserNamespace(string) error { return errNoNamespaces }

// probeOverlays refuses every overlay here: there is no overlay file
// system.
func probeOverlays(_ string, f plan.Files) []string {
	refused := make([]string, len(f.Overlays))
	for i := range refused {
		refused[i] = "no overlays on " + runtime.GOOS
	}
	return refused
}

// overlayTmpfsSize is 0 here: no overlays.
func overlayTmpfsSize(string) uint64 { return 0 }

// overlayMetacopy is false here: there is no overlay.
func overlayMetacopy() bool { return false }

// mountIdentity has no mount id to read here.
func mountIdentity(string, bool) (string, bool) { return "", false }

// SocketPair returns two connected stream sockets, neither inherited by
// accident: marked close-on-exec under syscall.ForkLock, as there is no
// SOCK_CLOEXEC here.
func SocketPair() (*os.File, *os.File, error) {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, err
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	return os.NewFile(uintptr(fds[0]), "approver"), os.NewFile(uintptr(fds[1]), "approver-child"), nil
}
