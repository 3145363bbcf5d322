package supervisor

import (
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/seatbelt"
)

// seatbeltCommand is the command that runs p's CMD under the Seatbelt
// profile of p: path is /usr/bin/sandbox-exec, by its absolute path,
// argv its argument vector (the profile, its -D parameters, --, CMD),
// every path of the plan resolved to the real path the kernel matches.
// It is the one place the macOS start asks for the profile; it runs
// nothing.
func seatbeltCommand(p *plan.Plan) (path string, argv []string, err error) {
	return seatbelt.Command(p, nil)
}
