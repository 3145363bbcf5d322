package escalation

import (
	"os"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// What every supervisor (dsh-fs exec, and the escalator Start begins)
// hands the processes it starts: a record of its policy, an environment
// without the variables that would change it, and channels not inherited
// by accident.

// Record is the record of a session of s, whose writable roots are
// roots: every resolved setting, and the roots the kernel layer leaves
// writable (none in read-only mode). The caller names its supervisor
// (Supervisor, SupervisorStart, SupervisorPidNS).
func Record(s *config.Settings, roots []sandbox.Root) *session.Record {
	values := map[string]any{}
	for _, v := range s.Values {
		values[string(v.Key)] = v.Value
	}
	var kernelRoots []string
	if s.Policy.Mode == sandbox.WorkspaceWrite {
		kernelRoots = sandbox.RootPaths(roots)
	}
	return &session.Record{Values: values, Roots: kernelRoots, ConfigFiles: s.Policy.ConfigFiles}
}

// SettingVariables are the DSH_FS_* variables that are session sources
// of a setting, by name.
var SettingVariables = sync.OnceValue(func() map[string]bool {
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
		case session.Env, session.BrokerEnv, session.BrokeredEnv, session.ApproverEnv:
			return true
		}
		return SettingVariables()[name]
	})
}

// SocketPair returns two connected stream sockets, neither inherited by
// accident.
func SocketPair() (*os.File, *os.File, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(fds[0]), "approver"), os.NewFile(uintptr(fds[1]), "approver-child"), nil
}
