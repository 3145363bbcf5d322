//go:build unix

package treeindex

import "golang.org/x/sys/unix"

// mapFile maps the index file fd, size bytes, to read.
func mapFile(fd, size int) ([]byte, error) {
	return unix.Mmap(fd, 0, size, unix.PROT_READ, unix.MAP_PRIVATE)
}

func unmapFile(data []byte) { unix.Munmap(data) }

// touch sets the index file's times to now: when it was last used.
func touch(fd int) { unix.Futimes(fd, nil) }
