package rawinit

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The first process's memory. A fork copies the caller's page tables and
// marks every page of its heap copy-on-write in both processes: the fork
// takes as long as the supervisor's heap is large, the supervisor then
// faults on each shared page it writes while the session runs, and the
// init holds a copy of everything the supervisor held at the fork, its
// environment and secrets included. The first process reads nothing of
// the heap: its values are in the arena, a shared mapping, and its
// stack is the caller's own. So every anonymous private writable
// mapping of the caller is left out of the fork (MADV_DONTFORK) and put
// back in the parent after it.

// span is the memory from lo up to hi.
type span struct{ lo, hi uintptr }

// Where the first process's stack may reach from forkFirst's frame: its
// calls are //go:nosplit, so they fit in the runtime's stack guard (under
// a kilobyte) below that frame; forkFirst's arguments lie just above it.
const (
	stackBelow = 16 << 10
	stackAbove = 4 << 10
)

// unshared are the pages of the caller's anonymous, private, writable
// mappings (its heap, the runtime's); the fork leaves them out. What
// stays: the arena (shared), the executable's data (an anonymous
// mapping right after a file's), the named mappings ([stack], [vdso]),
// the thread's TLS word, which compiled code reads back after a call
// into assembly, and with a C library the mapping of the thread's C
// data, where the kernel writes its rseq area as the child first runs.
// Nil where the thread pointer is not known (only amd64 reads it) or
// /proc/self/maps cannot be read: the fork then copies everything.
func unshared() []span {
	tp, known := threadPointer()
	if !known {
		return nil
	}
	keep := []span{{tp - 8, tp + 8}}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return nil
	}
	page := uintptr(os.Getpagesize())
	for i := range keep {
		keep[i].lo &^= page - 1
		keep[i].hi = (keep[i].hi + page - 1) &^ (page - 1)
	}
	var out []span
	var prevEnd uintptr
	prevFile := false
	for line := range bytes.Lines(maps) {
		f := bytes.Fields(line)
		if len(f) < 5 {
			return nil
		}
		lo, hi, ok := bytes.Cut(f[0], []byte("-"))
		if !ok {
			return nil
		}
		m, err1 := strconv.ParseUint(string(lo), 16, 64)
		n, err2 := strconv.ParseUint(string(hi), 16, 64)
		if err1 != nil || err2 != nil {
			return nil
		}
		s := span{uintptr(m), uintptr(n)}
		anon := string(f[4]) == "0" && len(f) == 5
		afterFile := prevFile && prevEnd == s.lo
		prevEnd, prevFile = s.hi, string(f[4]) != "0"
		if !anon || afterFile || string(f[1]) != "rw-p" || cLibrary && s.lo <= tp && tp < s.hi {
			continue
		}
		out = subtract(out, s, keep)
	}
	return out
}

// subtract appends to out the parts of s that no span of keep (sorted by
// lo) overlaps.
func subtract(out []span, s span, keep []span) []span {
	for _, k := range keep {
		if k.hi <= s.lo || k.lo >= s.hi {
			continue
		}
		if k.lo > s.lo {
			out = append(out, span{s.lo, k.lo})
		}
		s.lo = max(s.lo, k.hi)
		if s.lo >= s.hi {
			return out
		}
	}
	return append(out, s)
}

// caughtSignals are the signals the runtime has a handler for, as a
// kernel sigset: all but the ignored ones and those no handler can take.
// The first process resets them to the default (afterForkInChild).
func caughtSignals() uint64 {
	var set uint64
	for sig := syscall.Signal(1); sig <= 64; sig++ {
		if sig != syscall.SIGKILL && sig != syscall.SIGSTOP && !signal.Ignored(sig) {
			set |= sigBit(sig)
		}
	}
	return set
}

// adviseUnshared gives the spans of unshared the advice, but the pages
// from stackBelow under sp to stackAbove over it: the first process's
// stack.
//
//go:nosplit
//go:norace
//go:nocheckptr
func adviseUnshared(unshared []span, page, sp, advice uintptr) {
	lo, hi := (sp-stackBelow)&^(page-1), (sp+stackAbove+page-1)&^(page-1)
	for i := 0; i < len(unshared); i++ {
		s := unshared[i]
		if s.hi <= lo || s.lo >= hi {
			syscall.RawSyscall(syscall.SYS_MADVISE, s.lo, s.hi-s.lo, advice)
			continue
		}
		if s.lo < lo {
			syscall.RawSyscall(syscall.SYS_MADVISE, s.lo, lo-s.lo, advice)
		}
		if s.hi > hi {
			syscall.RawSyscall(syscall.SYS_MADVISE, hi, s.hi-hi, advice)
		}
	}
}

// reshare puts back in later forks what a fork left out.
func reshare(unshared []span) {
	for _, s := range unshared {
		syscall.Syscall(syscall.SYS_MADVISE, s.lo, s.hi-s.lo, unix.MADV_DOFORK)
	}
}

// afterForkInChild is the runtime's own hook in a forked child without
// its reads of the heap (the thread's g and m, which the child does not
// have): the runtime's signal handlers reset to the default, then the
// thread's signal mask from before the fork.
//
//go:nosplit
//go:norace
//go:nocheckptr
func afterForkInChild(r *readied) {
	for sig := uintptr(1); sig <= 64; sig++ {
		if r.caught&(1<<(sig-1)) != 0 {
			syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, sig, uintptr(unsafe.Pointer(&r.dfl)), 0, 8, 0, 0)
		}
	}
	syscall.RawSyscall6(unix.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&r.threadMask)), 0, 8, 0, 0)
}
