package layout

import (
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/policy"
)

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
