package treeindex

import "golang.org/x/sys/unix"

// statFS says what the file system holding abs keeps. Only local file
// systems whose kernel code stamps a folder's ctime on every change are
// trusted; a network or FUSE file system, where another machine or a
// user's daemon decides the times, is read whole every time. overlayfs
// keeps ctimes (its upper folders'), but its getdents inode numbers may
// be the lower layers'.
func statFS(abs string) fsInfo {
	var sfs unix.Statfs_t
	if unix.Statfs(abs, &sfs) != nil {
		return fsInfo{}
	}
	switch uint32(sfs.Type) {
	case unix.EXT4_SUPER_MAGIC, unix.XFS_SUPER_MAGIC, unix.BTRFS_SUPER_MAGIC, unix.TMPFS_MAGIC,
		unix.F2FS_SUPER_MAGIC, 0x2fc12fc1 /* zfs */, unix.BCACHEFS_SUPER_MAGIC:
		return fsInfo{ctimeKept: true, dinoKept: true}
	case unix.OVERLAYFS_SUPER_MAGIC:
		return fsInfo{ctimeKept: true}
	}
	return fsInfo{}
}
