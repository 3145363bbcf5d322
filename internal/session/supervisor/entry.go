package supervisor

import (
	"os/exec"

	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// The hidden entry points: arguments that make a dsh-fs process one of
// the helpers the shell starts of itself, not a command. Each is the
// whole of its process's argument list, is reached only through
// selfCommand, and trusts nothing but what its parent hands it on the
// descriptors it documents.
const (
	// argExecChild makes the session's child (child.Run): it reads its
	// plan on child.SpecFD, sets up the layers on itself and becomes CMD.
	argExecChild = "__exec-child"
	// argBrokeredCall carries out one request a session forwarded
	// (runBrokered), read on brokeredRequestFD, under the pinned record.
	argBrokeredCall = "__brokered-call"
	// argEscalator makes dsh-fs mcp's escalator (runEscalator): it
	// serves the broker channel its parent handed down as fd 3, and asks
	// its parent, over fd 4, what approval supervisor would ask a person.
	argEscalator = "__mcp-escalator"
	// argUserNamespaceProbe tries, once, what the mount layer will do
	// in a user namespace: mount (userNamespaceProbe). Some systems let
	// anyone make a user namespace but deny it mounting (an LSM's
	// policy); exec then says so rather than fail to start the session.
	argUserNamespaceProbe = "__userns-probe"
	// argCachesProbe mounts, once, the overlays of a session in a
	// private mount namespace of its own, which ends with it
	// (cachesProbe): whether the kernel takes an overlay is known only
	// by trying.
	argCachesProbe = "__caches-probe"
	// argGoCacheProg makes the session's Go build cache program
	// (gocacheprog.Serve), which the go command of a session whose
	// GOCACHE is a copy-on-write overlay starts as its GOCACHEPROG
	// (goCacheProgEnv): it serves $GOCACHE, the go command's requests on
	// stdin, its answers on stdout.
	argGoCacheProg = "__gocacheprog"
)

// The exit statuses of the entry points: the contract's success and
// "the operation failed" (docs/design.md, exit statuses).
const (
	statusOK     = 0
	statusFailed = 1
)

// Caller is what the brokered call needs of the front end that links
// this package: the call's start (settings, fence, escalation) and the
// rendering of its result live there (internal/cli), so the shell
// never imports the front end; it hands over a decoded request and
// takes back an exit status.
type Caller struct {
	// Run carries out req under the session's record, as the file tool
	// carries out the same operation with its escalation, and prints its
	// success result on stdout. Its error is the call's failure, not yet
	// printed.
	Run func(req wire.Request) error
	// Fail prints err as the failure result of the brokered call and
	// returns its exit status. Before Run has begun a call, the result's
	// op is "escalate".
	Fail func(err error) int
}

// selfCommand is this executable, self, run as the hidden entry point
// entry: the one place dsh-fs re-runs itself. Its argv[0] is "dsh-fs",
// whatever the binary's name, so ps names every process of the tool
// alike.
func selfCommand(self, entry string) *exec.Cmd {
	c := exec.Command(self, entry)
	c.Args[0] = "dsh-fs"
	return c
}

// EscalatorCommand is the command that starts dsh-fs mcp's escalator
// from self; its caller hands it the broker channel as fd 3 and the asks
// channel as fd 4 (ExtraFiles, in this order) and names its record in
// wire.Env.
func EscalatorCommand(self string) *exec.Cmd { return selfCommand(self, argEscalator) }

// The escalator's inherited descriptors.
const (
	escalatorBrokerFD = 3
	escalatorAsksFD   = 4
)
