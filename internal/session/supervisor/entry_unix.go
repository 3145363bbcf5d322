//go:build unix

package supervisor

import (
	"os"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

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
