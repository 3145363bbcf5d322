package supervisor

import (
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// seatbeltCommand is the command that runs p's CMD under the Seatbelt
// profile of p: path is /usr/bin/sandbox-exec, by its absolute path,
// argv its argument vector (the profile, its -D parameters, --, CMD).
// It is the one place the macOS start asks for the profile
// (internal/session/seatbelt's Command); it runs nothing.
//
// This build has no profile generator connected yet: it refuses, so no
// CMD ever runs unfenced on macOS.
func seatbeltCommand(p *plan.Plan) (path string, argv []string, err error) {
	return "", nil, errNoSeatbelt()
}

// errNoSeatbelt is exec's refusal on macOS while this build has no
// Seatbelt profile to run CMD under: FS_CONFIG_INVALID, as every layer
// the settings ask for and this machine cannot hold (networkMissing).
func errNoSeatbelt() error {
	e := fserr.New(fserr.ConfigInvalid, "exec: running a command on macOS needs its Seatbelt profile, which this build of dsh-fs cannot make yet")
	e.Hint = "mode: danger-full-access or enforce: off runs it without a sandbox"
	return e
}
