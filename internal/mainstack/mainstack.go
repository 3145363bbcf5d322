// Package mainstack grows the main goroutine's stack once, as the
// process starts, to 32 KiB: the depth a call of dsh-fs reaches.
//
// A goroutine's stack starts at 2 KiB and doubles as its calls deepen;
// each doubling allocates a stack and copies the frames, reading every
// frame's stack map to move the pointers into it. In a fresh process
// those maps and stacks are first touches, and dsh-fs's main goroutine
// doubled two to four times (package initialization, then the
// command). Grown here, while it holds a few frames, it is copied once.
package mainstack

// Its package has no imports, so it is initialized among the first.
func init() { grow(false) }

// grow's frame holds 28 KiB, so its prologue has the runtime grow the
// stack to 32 KiB in one step. never is false: the frame is never
// written (the array is zeroed in the branch), and the new stack's
// pages are touched only as deeper calls use them.
//
//go:noinline
func grow(never bool) {
	if never {
		var frame [28 << 10]byte
		keep(frame[:])
	}
}

//go:noinline
func keep(b []byte) { b[0]++ }
