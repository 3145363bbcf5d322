package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/dshfs/dsh-fs/internal/cli"
)

// Nobody is the unprivileged user the permission tests run dsh-fs as.
const Nobody = 65534

// CopyExecutable copies the program from to the path to, mode 0755, with
// the folders it needs (0755 too). No process is forked while the copy is
// open for writing (syscall.ForkLock): a child forked by a parallel test
// would hold it until its exec, and the copy's exec would fail with
// ETXTBSY ("text file busy", ci53; golang.org/issue/22315).
func CopyExecutable(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	dst, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(fmt.Errorf("copy %s: %w", to, err))
	}
}

// UnprivilegedBin copies this test binary, as dsh-fs and dsh-fs-mcp, into a fresh folder
// that Nobody can enter, and returns its path and the folder.
func UnprivilegedBin(t *testing.T) (bin, dir string) {
	t.Helper()
	dir = t.TempDir()
	for d := dir; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	bin = filepath.Join(dir, "bin", "dsh-fs")
	CopyExecutable(t, Bin(t), bin)
	// dsh-fs mcp runs dsh-fs-mcp from beside it, as installed.
	if err := os.Link(bin, filepath.Join(dir, "bin", cli.MCPBinary)); err != nil {
		t.Fatal(err)
	}
	return bin, dir
}
