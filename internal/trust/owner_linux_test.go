package trust

import (
	"os/exec"
	"syscall"
	"testing"
)

// asUnmappedUser runs c as uid (and gid) in a user namespace that maps
// that user alone.
func asUnmappedUser(_ *testing.T, c *exec.Cmd, uid uint32) {
	c.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: int(uid), Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: int(uid), Size: 1}},
		Credential:  &syscall.Credential{Uid: uid, Gid: uid, Groups: []uint32{}},
	}
}
