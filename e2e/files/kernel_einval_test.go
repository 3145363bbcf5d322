package files

import (
	"os"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// TestKernelEINVALIsIOFailure (issue 27): an EINVAL the kernel returns
// for what dsh-fs passed it is an I/O failure, FS_IO and exit 1, not the
// usage exit 2 of FS_INVALID_ARGUMENT, which is kept for bad input dsh-fs
// finds itself. /proc/self/clear_refs is a regular file with a write
// operation and no read: root may open it for reading (DAC does not stop
// root), and read(2) then fails with EINVAL. It was FS_INVALID_ARGUMENT,
// exit 2. The control, a flag dsh-fs refuses itself, stays exit 2.
func TestKernelEINVALIsIOFailure(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("needs root: only root opens the write-only /proc/self/clear_refs for reading, where read(2) is EINVAL (euid %d)", os.Geteuid())
	}
	const path = "/proc/self/clear_refs"
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o444 != 0 {
		t.Skipf("%s is not the write-only regular file this test needs: %v %v", path, fi, err)
	}
	ws := harness.CanonicalTemp(t)
	env := harness.Env(t, ws)

	status, res, out, errOut := harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, "read", path), nil)
	if status != 1 || res.OK || res.Error.Code != "FS_IO" {
		t.Errorf("read %s: exit %d, code %q; want exit 1 and FS_IO\nstdout: %s\nstderr: %s", path, status, res.Error.Code, out, errOut)
	}
	if want := "read: " + path + ": invalid argument"; res.Error.Message != want {
		t.Errorf("message %q, want %q: the kernel's reason, as it said it", res.Error.Message, want)
	}

	status, res, out, _ = harness.Run(t, harness.Cmd(harness.Bin(t), env, ws, "read", "--limit", "many", "a.txt"), nil)
	if status != 2 || res.Error.Code != "FS_INVALID_ARGUMENT" {
		t.Errorf("control: read --limit many: exit %d, code %q; want exit 2 and FS_INVALID_ARGUMENT\n%s", status, res.Error.Code, out)
	}
}
