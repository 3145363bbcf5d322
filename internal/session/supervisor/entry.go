package supervisor

import (
	"os"
	"os/exec"

	"github.com/dshfs/dsh-fs/internal/fserr"
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

// Entry runs args when they are one of the hidden entry points, and then
// returns the process's exit status and true; for any other args it
// does nothing and returns false. Main calls it before anything else,
// in every binary that runs dsh-fs: the entry points are re-runs of
// the binary that started them. c serves the brokered call.
func Entry(args []string, c Caller) (status int, handled bool) {
	mark("main")
	if len(args) != 1 {
		return 0, false
	}
	switch args[0] {
	case argExecChild:
		return runChild(), true
	case argBrokeredCall:
		return runBrokered(c), true
	case argEscalator:
		return runEscalator(), true
	case argUserNamespaceProbe:
		return userNamespaceProbe(), true
	case argCachesProbe:
		return cachesProbe(), true
	case argGoCacheProg:
		return goCacheProg(), true
	}
	return 0, false
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

// runBrokered is the brokered call's whole life: it decodes the request,
// strictly again, and has c carry it out; the result goes to stdout.
func runBrokered(c Caller) int {
	f := os.NewFile(brokeredRequestFD, "request")
	req, err := wire.DecodeRequest(f)
	f.Close()
	if err == nil {
		err = c.Run(req)
	} else {
		err = fserr.New(fserr.InvalidArgument, err.Error())
	}
	if err == nil {
		return statusOK
	}
	return c.Fail(err)
}

// runEscalator is the escalator's whole life: it runs the calls the
// server sends until the server is gone.
func runEscalator() int {
	self, err := os.Executable()
	if err != nil {
		return statusFailed
	}
	asker := wire.NewAsker(os.NewFile(escalatorAsksFD, "asks"))
	r := &callRunner{self: self, record: os.Getenv(wire.Env), ask: asker.Ask}
	wire.ServeAll(os.NewFile(escalatorBrokerFD, "broker"), refuseMemory(r.run))
	return statusOK
}

// The escalator's inherited descriptors.
const (
	escalatorBrokerFD = 3
	escalatorAsksFD   = 4
)
