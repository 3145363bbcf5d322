package config

import (
	"errors"
	"fmt"
	"os"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/trust"
)

// checkTrusted refuses a trusted file (the system file, the user's, the
// managed requirements) that someone but root or this user could have
// written: one others may write or another user owns, or one in a folder,
// at any level, that another user owns or others may write (a sticky
// folder such as /tmp aside), where they could put a file of their own
// (docs/design.md §2). The file is judged as opened (f), the way to it by
// lstat (trust.CheckTrustedPath); the refusal is FS_CONFIG_INVALID
// naming the file and the folder at fault, never a file left out.
func checkTrusted(path, real string, f *os.File) error {
	err := trust.CheckTrustedOpened(path, f)
	if err == nil {
		var resolved string
		resolved, err = trust.CheckTrustedPath(path, true)
		if err == nil && !trust.SamePath(resolved, real) {
			// What was opened is not where the path leads now: it
			// changed meanwhile, which only root or this user could do.
			err = &trust.UnsafeError{Path: path, Why: "it changed while it was read"}
		}
	}
	if err == nil {
		return nil
	}
	var ue *trust.UnsafeError
	if !errors.As(err, &ue) {
		return fserr.Wrap(fserr.ConfigInvalid, fmt.Sprintf("config %s: %v", path, err), err)
	}
	where := ""
	if ue.Path != path {
		where = ue.Path + ": "
	}
	return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: not trusted: %s%s; %s", path, where, ue.Why, trustHint))
}
