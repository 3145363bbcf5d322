package fsops

import (
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// MkdirResult is the result of a mkdir.
type MkdirResult struct {
	// Created says the folder did not exist before; its missing parents
	// were made too.
	Created bool `json:"created"`
}

// Mkdir makes the folder t and its missing parents, each through the
// confined handle of the one above it, as write --mkdir does. A folder
// that already exists is no error. It is a mutation: the fence decides,
// and the kernel layer is in place before the first folder is made.
func Mkdir(f *sandbox.Fence, t sandbox.Target) (*MkdirResult, error) {
	dir, name, err := f.OpenForWrite("mkdir", &t, sandbox.Intent{Mkdir: true})
	if fserr.CodeOf(err) == fserr.IsDir && t.IsRoot() {
		// A writable root is a folder that exists, or the fence could
		// not have opened it; making it again makes nothing.
		if _, err := f.Lstat("mkdir", t); err == nil {
			return &MkdirResult{}, nil
		}
	}
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	created, err := dir.Mkdir(name, 0o777)
	if err != nil {
		return nil, err
	}
	return &MkdirResult{Created: created}, nil
}
