package cli

import (
	"os"

	"github.com/dshfs/dsh-fs/internal/escalation"
	"github.com/dshfs/dsh-fs/internal/session"
)

// runEscalator is the escalator's whole life (escalation.Arg): it runs
// the calls the server sends until the server is gone, asking the server
// what approval supervisor would ask a person.
func runEscalator() int {
	self, err := os.Executable()
	if err != nil {
		return ExitFailed
	}
	asker := session.NewAsker(os.NewFile(escalation.AsksFD, "asks"))
	r := &callRunner{self: self, record: os.Getenv(session.Env), ask: asker.Ask}
	session.ServeAll(os.NewFile(escalation.BrokerFD, "broker"), r.run)
	return ExitOK
}
