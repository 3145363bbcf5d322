package rawinit

import (
	"syscall"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// The first process's steps, as its report names the one that failed.
const (
	stepNone uint32 = iota
	stepSync
	stepUnshare
	stepFiles
	stepClose
	stepSetsid
	stepCtty
	stepParentDeath
	stepUndumpable
	stepChdir
	stepProc
	stepKeyring
	stepNoNewPrivs
	stepLandlock
	stepCapBound
	stepSecurebits
	stepAmbient
	stepCapset
	stepPrivsNoNewPrivs
	stepFilterNoNewPrivs
	stepSeccomp
	stepSignals
	stepFork
	stepPgid
	stepForeground
	stepExec
	stepCount
)

// stepWords say what each step was, in the words of the layer it
// belongs to: the failure's message is these, then the errno's text.
var stepWords = [stepCount]string{
	stepSync:             "first process: waiting for its start",
	stepUnshare:          "descriptors: a table of its own",
	stepFiles:            "descriptors: placing them",
	stepClose:            "descriptors: closing the others",
	stepSetsid:           "terminal layer: setsid",
	stepCtty:             "terminal layer: controlling terminal",
	stepParentDeath:      "processes layer: parent death signal",
	stepUndumpable:       "processes layer: not dumpable",
	stepProc:             "processes layer: mount /proc",
	stepKeyring:          "keyring: joining a session keyring of its own",
	stepNoNewPrivs:       "kernel layer: no_new_privs",
	stepLandlock:         "kernel layer: landlock",
	stepCapBound:         "privileges: drop a capability from the bounding set",
	stepSecurebits:       "privileges: securebits",
	stepAmbient:          "privileges: clear ambient capabilities",
	stepCapset:           "privileges: capset",
	stepPrivsNoNewPrivs:  "privileges: no_new_privs",
	stepFilterNoNewPrivs: "kernel calls: no_new_privs",
	stepSeccomp:          "kernel calls: seccomp",
	stepSignals:          "processes layer: signal mask",
	stepFork:             "processes layer: fork",
	stepPgid:             "processes layer: process group",
	stepForeground:       "terminal layer: foreground",
}

// failure is the error of a failed step: the command's name for its
// execve ("sh: no such file or directory"), the folder for chdir, else
// the step's words; always fserr.IO, as the session could not start.
func (p *Pending) failure(step uint32, errno syscall.Errno) error {
	var what string
	switch {
	case step >= stepOps:
		return p.opFailure(int(step-stepOps), errno)
	case step == stepExec:
		what = p.argv0
	case step == stepChdir:
		what = "chdir " + p.dirName
	case step < stepCount && stepWords[step] != "":
		what = stepWords[step]
	default:
		what = "rawinit: an unknown step"
	}
	return fserr.Wrap(fserr.IO, what+": "+errno.Error(), errno)
}
