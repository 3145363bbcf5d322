//go:build unix

package toolchains

import (
	"fmt"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// killGroupOnCancel runs c in a process group of its own and kills the
// whole group when c is canceled: a shim (pyenv's pip is a shell
// script) leaves its own children holding the output pipe otherwise.
func killGroupOnCancel(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return unix.Kill(-c.Process.Pid, unix.SIGKILL) }
}

// statIdentity is the identity of the file at real: device, inode,
// size, mtime and ctime.
func statIdentity(real string) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(real, &st); err != nil {
		return "", err
	}
	return identityOf(&st), nil
}

// identityOf is statIdentity's words for st.
func identityOf(st *unix.Stat_t) string {
	return fmt.Sprintf("dev=%d ino=%d size=%d mtime=%d.%09d ctime=%d.%09d", st.Dev, st.Ino, st.Size,
		st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
