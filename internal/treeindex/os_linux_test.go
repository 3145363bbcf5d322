package treeindex

import "golang.org/x/sys/unix"

// tmpfsAt reports whether a tmpfs is mounted at p.
func tmpfsAt(p string) bool {
	var sfs unix.Statfs_t
	return unix.Statfs(p, &sfs) == nil && uint32(sfs.Type) == unix.TMPFS_MAGIC
}
