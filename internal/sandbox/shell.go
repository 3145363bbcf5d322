package sandbox

import (
	"fmt"
	"slices"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// ShellDevices are the device files a shell and the programs it runs
// write to whatever the policy: the bit bucket, the random sources and
// the terminal. /dev/pts holds the terminals themselves.
var ShellDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx"}

// shellTerminals is the folder of the pseudo-terminals a shell, script(1)
// or an editor opens for writing.
const shellTerminals = "/dev/pts"

// TreeLayer says whether the kernel layer of a dsh-fs exec session can
// restrict its process tree under policy p: its Landlock ABI, or 0 and
// why not. enforce landlock on a kernel without it is FS_CONFIG_INVALID.
func TreeLayer(p policy.Policy) (abi int, why string, err error) {
	switch {
	case p.Mode == policy.DangerFullAccess:
		return 0, "danger-full-access mode", nil
	case p.Enforce == policy.EnforceOff:
		return 0, "enforce: off", nil
	case kernel.ABI() == 0:
		if p.Enforce == policy.EnforceLandlock {
			return 0, "", fserr.New(fserr.ConfigInvalid, "enforce: landlock is not available on this kernel (use enforce: auto or off)")
		}
		return 0, "this kernel has no Landlock", nil
	}
	return kernel.ABI(), "", nil
}

// RestrictTree restricts this process, and every process it will start,
// so that the kernel refuses every write except beneath roots (all write
// rights) and to the ShellDevices and terminals (writing to them, never
// making or removing files there). No process of the tree can lift it.
// dsh-fs exec's child calls it last, just before it executes the shell;
// in read-only mode roots is empty. No device node can be made, and where
// the ABI has scopes no signal or abstract socket reaches outside the
// tree. Reads stay unrestricted: deny_read is the mount layer's.
func RestrictTree(roots []string) error {
	if kernel.ABI() == 0 {
		return fserr.New(fserr.IO, "landlock is not available on this kernel")
	}
	if err := kernel.RestrictWrites(existingDirs(roots), append(slices.Clip(ShellDevices), shellTerminals), true); err != nil {
		return fserr.Wrap(fserr.IO, fmt.Sprintf("landlock: %v", err), err)
	}
	return nil
}
