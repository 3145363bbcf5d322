package sandbox

import (
	"testing"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// TestCodesAreTheCommands: each public code is the command's.
func TestCodesAreTheCommands(t *testing.T) {
	for public, internal := range map[string]fserr.Code{
		CodeDenied: fserr.SandboxDenied, CodeNotFound: fserr.NotFound, CodeIsDir: fserr.IsDir,
		CodeNotDir: fserr.NotDir, CodeBinary: fserr.Binary, CodeTooLarge: fserr.TooLarge,
		CodeEditNoMatch: fserr.EditNoMatch, CodeEditAmbiguous: fserr.EditAmbiguous, CodeStale: fserr.Stale,
		CodeExists: fserr.Exists, CodePermission: fserr.Permission, CodeNoSpace: fserr.NoSpace,
		CodeInvalidArgument: fserr.InvalidArgument, CodeConfigInvalid: fserr.ConfigInvalid, CodeIO: fserr.IO,
	} {
		if public != string(internal) {
			t.Errorf("%s is %s in the command", public, internal)
		}
	}
}
