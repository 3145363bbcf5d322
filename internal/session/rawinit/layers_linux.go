package rawinit

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// lockedSecurebits (linux/securebits.h, which x/sys lacks): uid 0 gains
// nothing at an execve (noroot), keep_caps stays off, and no capability
// can be raised to the ambient set; each locked.
const lockedSecurebits = 1<<0 | 1<<1 | // SECBIT_NOROOT, _LOCKED
	1<<5 | // SECBIT_KEEP_CAPS_LOCKED
	1<<6 | 1<<7 // SECBIT_NO_CAP_AMBIENT_RAISE, _LOCKED

// applyLayers installs the layers on the first process, in Layers'
// order: the keyring, the Landlock rulesets, the privileges, last the
// seccomp filters, so nothing before needs a call they refuse.
//
//go:nosplit
//go:norace
//go:nocheckptr
func applyLayers(r *readied) syscall.Errno {
	if r.keyring {
		r.step = stepKeyring
		// A NULL name: an anonymous keyring. ENOSYS: a kernel without
		// keyrings has none to share; EPERM: an outer session's
		// filter refuses keyctl, its keyrings are out of reach.
		_, _, e := syscall.RawSyscall(unix.SYS_KEYCTL, unix.KEYCTL_JOIN_SESSION_KEYRING, 0, 0)
		if e != 0 && e != syscall.ENOSYS && e != syscall.EPERM {
			return e
		}
	}
	if len(r.rulesets) > 0 {
		r.step = stepNoNewPrivs
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			return e
		}
		r.step = stepLandlock
		for i := 0; i < len(r.rulesets); i++ {
			if _, _, e := syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(r.rulesets[i]), 0, 0); e != 0 {
				return e
			}
		}
	}
	if r.drop {
		if e := dropPrivileges(r); e != 0 {
			return e
		}
	}
	if len(r.filters) > 0 {
		r.step = stepFilterNoNewPrivs
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); e != 0 {
			return e
		}
		r.step = stepSeccomp
		for i := 0; i < len(r.filters); i++ {
			if _, _, e := syscall.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&r.filters[i]))); e != 0 {
				return e
			}
		}
	}
	return 0
}

// dropPrivileges drops every capability (Privileges) with raw calls,
// this process's own sets emptied too, as an init never executes: the
// bounding set emptied where CAP_SETPCAP allows (EPERM: it stays, and
// no_new_privs keeps anything from being raised from it), securebits
// locked then, the ambient set cleared, every set emptied, no_new_privs.
//
//go:nosplit
//go:norace
//go:nocheckptr
func dropPrivileges(r *readied) syscall.Errno {
	r.step = stepCapBound
	bounded := true
	for c := 0; c <= r.lastCap; c++ {
		_, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0)
		if e == syscall.EPERM {
			bounded = false
			break
		}
		if e != 0 {
			return e
		}
	}
	if bounded {
		r.step = stepSecurebits
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_SECUREBITS, lockedSecurebits, 0, 0, 0, 0); e != 0 {
			return e
		}
	}
	r.step = stepAmbient
	_, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0)
	if e != 0 && e != syscall.EINVAL { // EINVAL: a kernel without ambient capabilities
		return e
	}
	r.step = stepCapset
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&r.capHdr)), uintptr(unsafe.Pointer(&r.capData[0])), 0); e != 0 {
		return e
	}
	r.step = stepPrivsNoNewPrivs
	_, _, e = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0)
	return e
}
