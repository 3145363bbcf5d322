package supervisor

import (
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Options are what a session needs of the front end that starts it: its
// streams, its environment, the settings the front end resolved from its
// command line and the trusted sources, and the command.
type Options struct {
	// Stdin, Stdout and Stderr are exec's streams: CMD's, where they
	// are not a terminal; a terminal among them is relayed (tty.go).
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// LookupEnv reads exec's environment (HOME, XDG_RUNTIME_DIR).
	LookupEnv func(string) (string, bool)
	// Settings are the session's, resolved with exec's flags trusted
	// (config.Source.FlagsTrusted, ConfigTrusted).
	Settings *config.Settings
	// Argv is the command the session runs, its program first.
	Argv []string
}

// Privileges is what CMD keeps of its privileges under p: in
// danger-full-access all of them (the harness asked for no sandbox);
// otherwise none, where the bounding set can be emptied (as root, or in
// the user namespace of the mount layer), else no_new_privs and no
// capability to use, the bounding set left as it is.
func Privileges(p policy.Policy, mounts bool) string {
	switch {
	case p.Mode == policy.DangerFullAccess:
		return wire.PrivilegesKept
	case os.Geteuid() == 0 || mounts && layout.UserNamespace():
		return wire.PrivilegesNone
	}
	return wire.PrivilegesNoNewPrivs
}

// settingVariables are the DSH_FS_* variables that are session sources
// of a setting, by name.
var settingVariables = sync.OnceValue(func() map[string]bool {
	names := map[string]bool{}
	for _, v := range config.Environment() {
		names[v.Name] = true
	}
	return names
})

// WithoutSessionVars is env without the setting variables and the
// session's own: what a supervisor passes on is decided afresh.
func WithoutSessionVars(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case wire.Env, wire.BrokerEnv, wire.BrokeredEnv, wire.ApproverEnv, audit.NotesEnv:
			return true
		}
		return settingVariables()[name]
	})
}
