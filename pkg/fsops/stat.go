package fsops

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// StatResult describes a path. A path that does not exist is a result with
// Exists false, not an error, so a caller can ask before it writes.
type StatResult struct {
	Exists bool `json:"exists"`
	Info
	// Writable says whether a mutation of the path would pass the current
	// policy; WritableReason says why not.
	Writable       bool   `json:"writable"`
	WritableReason string `json:"writable_reason,omitempty"`
}

// Stat describes t without following a final symlink, and judges whether a
// mutation of it would pass the fence. A path under deny_read is denied.
func Stat(f *sandbox.Fence, t sandbox.Target) (*StatResult, error) {
	if err := f.CheckRead("stat", t); err != nil {
		return nil, err
	}
	res := &StatResult{}
	res.Writable, res.WritableReason = f.Writable(t)
	fi, err := os.Lstat(asWritten(f, t.Given))
	if errors.Is(err, fs.ErrNotExist) {
		return res, nil
	}
	if err != nil {
		return nil, fserr.FromOS("stat", t.Given, err)
	}
	res.Exists = true
	res.Info = describe(asWritten(f, t.Given), fi)
	return res, nil
}

// asWritten returns the path as the caller wrote it, made absolute against
// the session cwd without cleaning, so the kernel resolves "link/.." the
// way it always does.
func asWritten(f *sandbox.Fence, given string) string {
	if filepath.IsAbs(given) {
		return given
	}
	return f.Policy().Cwd + string(filepath.Separator) + given
}
