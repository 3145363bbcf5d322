//go:build unix

package fsops

import "golang.org/x/sys/unix"

// mapAnon is size bytes of memory of their own, mapped private and
// anonymous, for a large file's load (loadFile).
func mapAnon(size int) ([]byte, error) {
	return unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// unmapAnon gives back what mapAnon gave.
func unmapAnon(m []byte) { unix.Munmap(m) }
