package cmd

import "github.com/dshfs/dsh-fs/pkg/fserr"

// Exit statuses of docs/design.md §6. They are API.
const (
	ExitOK     = 0
	ExitFailed = 1
	ExitUsage  = 2
	ExitDenied = 3
)

// exitStatus is the one table from error code to exit status.
func exitStatus(code fserr.Code) int {
	switch code {
	case fserr.SandboxDenied:
		return ExitDenied
	case fserr.InvalidArgument, fserr.ConfigInvalid:
		return ExitUsage
	}
	return ExitFailed
}
