package shell

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/tty"
	"golang.org/x/sys/unix"
)

// probeUserNamespace reports whether a child in a user namespace can
// mount here; as root there is nothing to probe.
func probeUserNamespace(self string) error {
	if !sandbox.UserNamespace() {
		return nil
	}
	c := selfCommand(self, argUserNamespaceProbe)
	c.SysProcAttr = mountNamespace()
	out, err := c.CombinedOutput()
	if err != nil {
		if msg := strings.TrimSpace(string(out)); msg != "" {
			return errors.New(msg)
		}
		return err
	}
	return nil
}

// userNamespaceProbe is the probe's whole life, in its private mount
// namespace, where nothing it mounts is seen outside.
func userNamespaceProbe() int {
	if err := unix.Mount("none", os.TempDir(), "tmpfs", 0, "size=4k"); err != nil {
		fmt.Fprintln(os.Stderr, "mount:", err)
		return statusFailed
	}
	if err := mountProc(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	if err := tty.IsolateTerminals(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return statusFailed
	}
	return statusOK
}
