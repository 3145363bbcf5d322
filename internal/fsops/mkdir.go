package fsops

import (
	"os"
	slash "path"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsys"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// MkdirOptions are what a mkdir asks besides its folder.
type MkdirOptions struct {
	// Parents makes the missing folders above it too; without it a
	// missing parent is FS_NOT_FOUND and nothing is made.
	Parents bool
	// DryRun decides and checks, and makes nothing.
	DryRun bool
}

// MkdirResult is the result of a mkdir.
type MkdirResult struct {
	// Created says the folder did not exist before (with Parents, its
	// missing parents were made too); false for a folder that was there.
	Created bool `json:"created"`
	DryRun  bool `json:"dry_run,omitempty"`
}

// Mkdir makes the folder t, resolved by name (sandbox.Fence.ResolveName),
// through the confined handle of its parent,
// and with Parents each missing folder above it through the handle of
// the one above that, as write --mkdir does. A folder that already
// exists is no error (Created false): a retry after a lost answer is
// harmless; anything else there, a symlink included, is FS_EXISTS and
// never followed. It is a mutation: the fence decides, an escalation
// shows its approver the folders it makes, and the kernel layer is in
// place before the first folder is made.
func Mkdir(f *sandbox.Fence, t sandbox.Target, opt MkdirOptions) (*MkdirResult, error) {
	in := sandbox.Intent{Mkdir: opt.Parents, Preview: func() (sandbox.Preview, error) {
		return sandbox.Preview{Paths: mkdirPaths(t, opt.Parents)}, nil
	}}
	if err := decideFollowed(f, "mkdir", t); err != nil {
		return nil, err
	}
	if opt.DryRun {
		return mkdirDryRun(f, t, in, opt)
	}
	created, err := f.Mkdir("mkdir", &t, in)
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
	return &MkdirResult{Created: created}, nil
}

// mkdirPaths are the folders a mkdir of t would make, as its approver is
// shown them: t, and with parents each missing folder above it.
func mkdirPaths(t sandbox.Target, parents bool) []policy.EscalationPath {
	paths := []policy.EscalationPath{sandbox.PathOf(policy.PathCreate, t)}
	for dir := slash.Dir(t.Path); parents && dir != "/"; dir = slash.Dir(dir) {
		if _, err := os.Lstat(fsys.ToOS(dir)); err == nil {
			break
		}
		paths = append(paths, policy.EscalationPath{Op: policy.PathCreate, Path: dir, Resolved: dir})
	}
	return paths
}

// mkdirDryRun decides on t as Mkdir does and says what it would make.
func mkdirDryRun(f *sandbox.Fence, t sandbox.Target, in sandbox.Intent, opt MkdirOptions) (*MkdirResult, error) {
	if err := f.WouldWrite("mkdir", &t, in); err != nil {
		return nil, err
	}
	if st, err := f.Lstat("mkdir", t); err == nil {
		if !fileMode(uint32(st.Mode)).IsDir() {
			return nil, fserr.New(fserr.Exists, "mkdir: "+t.Given+": exists and is not a folder")
		}
		return &MkdirResult{DryRun: true}, nil
	}
	if !opt.Parents {
		if err := parentFolder(f, "mkdir", t); err != nil {
			return nil, err
		}
	}
	return &MkdirResult{Created: true, DryRun: true}, nil
}

// parentFolder checks, for a dry run, that the folder t would be made or
// moved into exists.
func parentFolder(f *sandbox.Fence, op string, t sandbox.Target) error {
	parent := slash.Dir(t.Path)
	st, err := f.Lstat(op, sandbox.Target{Given: parent, Path: parent})
	if fserr.CodeOf(err) == fserr.NotFound {
		return sandbox.MissingFolder(op, t.Given, parent, err)
	}
	if err != nil {
		return err
	}
	if !fileMode(uint32(st.Mode)).IsDir() {
		return fserr.New(fserr.NotDir, op+": "+t.Given+": "+parent+" is not a folder")
	}
	return nil
}
