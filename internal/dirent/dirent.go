// Package dirent reads a folder's entries from its descriptor, in the
// kernel's own record format, for the packages that list folders through
// descriptors (the fence, the git guard, the tree index): one call and
// one record layout per OS, in a file named for it.
//
// A record starts with its inode number (8 bytes, the machine's order)
// and holds its length (2 bytes) at offset 16; its type (a DT_ value) is
// at TypeOff and its name, NUL-padded to the record's length, at
// NameOff.
package dirent
