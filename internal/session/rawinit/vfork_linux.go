//go:build amd64 || arm64

package rawinit

// rawVfork is clone(2) with flags and no new stack, for a child made
// with CLONE_VM|CLONE_VFORK (vfork_linux_*.s): written in assembly so
// that the child's return from it cannot change the return address the
// parent returns to.
func rawVfork(flags uintptr) (pid, errno uintptr)
