package rawinit

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The first process's values live in an arena: one shared anonymous
// mapping made before the fork, which the first process has at the same
// address. So the fork can come first (Fork) and the values after it
// (Pending.Start): what Start writes there the waiting child reads once
// it is handed over. Nothing in the arena points outside it, and no Go
// heap object is kept alive by it: the garbage collector never looks
// there.

// arenaSize is the arena's address space: the pages written are all it
// costs. A spec that does not fit (its command, environment and ops
// are far larger than any execve allows) is refused.
const arenaSize = 16 << 20

// arena hands out the mapping's memory in order.
type arena struct {
	mem  []byte
	used uintptr
	full bool // something did not fit: it was put on the heap instead, and the spec is refused
}

// newArena maps an arena.
func newArena() (*arena, error) {
	mem, err := unix.Mmap(-1, 0, arenaSize, unix.PROT_READ|unix.PROT_WRITE,
		unix.MAP_SHARED|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, err
	}
	return &arena{mem: mem}, nil
}

// unmap unmaps the arena here; the first process keeps its own mapping.
func (a *arena) unmap() {
	if a.mem != nil {
		unix.Munmap(a.mem)
		a.mem = nil
	}
}

// place is n zeroed values of T in a; where they do not fit, on the heap,
// and a is marked full.
func place[T any](a *arena, n int) []T {
	if n <= 0 {
		return nil
	}
	var zero T
	size, align := unsafe.Sizeof(zero)*uintptr(n), unsafe.Alignof(zero)
	at := (a.used + align - 1) &^ (align - 1)
	if size/uintptr(n) != unsafe.Sizeof(zero) || at+size > uintptr(len(a.mem)) {
		a.full = true
		return make([]T, n)
	}
	a.used = at + size
	return unsafe.Slice((*T)(unsafe.Pointer(&a.mem[at])), n)
}

// placeOne is one zeroed T in a (place).
func placeOne[T any](a *arena) *T { return &place[T](a, 1)[0] }

// placeCopy is a copy of s in a (place).
func placeCopy[T any](a *arena, s []T) []T {
	c := place[T](a, len(s))
	copy(c, s)
	return c
}

// cstring is s with a NUL after it, in a; s holds no NUL (checked by
// the caller).
func (a *arena) cstring(s string) *byte {
	b := place[byte](a, len(s)+1)
	copy(b, s)
	return &b[0]
}

// cstrings are ss as C strings in a, and the array of their addresses
// with a nil after the last.
func (a *arena) cstrings(ss []string) []*byte {
	v := place[*byte](a, len(ss)+1)
	for i, s := range ss {
		v[i] = a.cstring(s)
	}
	return v
}
