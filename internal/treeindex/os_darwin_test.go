package treeindex

// tmpfsAt is false: macOS has no tmpfs.
func tmpfsAt(string) bool { return false }
