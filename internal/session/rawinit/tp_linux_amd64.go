package rawinit

import (
	"syscall"
	"unsafe"
)

// archGetFS is arch_prctl's ARCH_GET_FS.
const archGetFS = 0x1003

// threadPointer is the calling thread's TLS pointer (the FS base).
func threadPointer() (uintptr, bool) {
	var tp uintptr
	_, _, e := syscall.RawSyscall(syscall.SYS_ARCH_PRCTL, archGetFS, uintptr(unsafe.Pointer(&tp)), 0)
	return tp, e == 0
}
