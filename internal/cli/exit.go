package cli

import "github.com/dshfs/dsh-fs/internal/fserr"

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

// ExitStatus is one exit status and what it means, for the man pages.
type ExitStatus struct {
	Status  int
	Meaning string
}

// ExitStatuses lists the exit statuses of docs/design.md §6, in order.
func ExitStatuses() []ExitStatus {
	return []ExitStatus{
		{ExitOK, "success"},
		{ExitFailed, "the operation failed (not found, no match, stale, exists, I/O, …); the result says why"},
		{ExitUsage, "bad usage or config: " + string(fserr.InvalidArgument) + ", " + string(fserr.ConfigInvalid)},
		{ExitDenied, "the sandbox denied the call: " + string(fserr.SandboxDenied)},
	}
}
