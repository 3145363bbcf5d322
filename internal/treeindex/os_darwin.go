package treeindex

import "golang.org/x/sys/unix"

// getdents reads the folder fd's entries as struct dirent records: ino
// u64, seekoff u64, reclen u16, namlen u16, type u8, then the name.
func getdents(fd int, buf []byte) (int, error) {
	var base uintptr
	return unix.Getdirentries(fd, buf, &base)
}

const (
	direntTypeOff = 20
	direntNameOff = 21
)

// statFS trusts no file system on macOS yet: whether APFS stamps a
// folder's ctime on every change of its entries, and gives readdir the
// inode numbers stat gives, has not been checked on a Mac, so every
// folder is read whole every time (slower, never stale).
func statFS(string) fsInfo { return fsInfo{} }
