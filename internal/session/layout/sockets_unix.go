//go:build unix

package layout

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/kernel"
)

// readBoundSockets reads the bound pathname sockets from the verified
// /proc's net/unix of this process: each once, abstract ones (Landlock's
// scopes) left out.
func readBoundSockets() ([]string, error) {
	proc, err := kernel.ProcRoot()
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(proc, "self/net/unix", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("/proc/self/net/unix: %w", err)
	}
	f := os.NewFile(uintptr(fd), "/proc/self/net/unix")
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("/proc/self/net/unix: %w", err)
	}
	return parseNetUnix(string(data))
}
