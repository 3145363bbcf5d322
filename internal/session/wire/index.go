package wire

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/treeindex"
)

// IndexStore opens the store of the writable roots' tree indexes
// (treeindex), which the mount plan of every session of this user reads
// and brings up to date: the folder index in RuntimeBase, made 0700 when
// missing. It is held as the records are: xdg must be this user's
// runtime folder, or unset (checkRuntimeFolder, as for Dir), and the folder and every folder above it
// owned by root or this user and writable by no one else, outside every
// root in roots: a session that could write an index could make a
// folder of a root read as empty to the next session's plan.
func IndexStore(xdg string, roots []string) (*treeindex.Store, error) {
	base := RuntimeBase()
	if err := checkRuntimeFolder(xdg); err != nil {
		return nil, fmt.Errorf("the tree index: %w", err)
	}
	dir := filepath.Join(base, "index")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(dir)
	switch {
	case err != nil:
		return nil, err
	case real != dir:
		return nil, fmt.Errorf("the tree index folder %s leads to %s", dir, real)
	}
	if err := checkPrivate(real); err != nil {
		return nil, err
	}
	for _, r := range roots {
		if sandbox.Beneath(r, real) {
			return nil, fmt.Errorf("the tree index folder %s lies in the writable root %s", real, r)
		}
	}
	return treeindex.OpenStore(real)
}
