package supervisor

import (
	"os"
	"sync"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// NewRecord is the record of a session of s, whose writable roots
// are roots: every resolved setting, the roots the kernel layer leaves
// writable (none in read-only mode), and this process as its supervisor.
// It is the one place a record is made: exec's supervisor fills in its
// shell's layers; dsh-fs mcp's escalator, a process of its own, names
// itself in Supervisor and SupervisorStart.
func NewRecord(s *config.Settings, roots []sandbox.Root) *wire.Record {
	values := map[string]any{}
	for _, v := range s.Values {
		values[string(v.Key)] = v.Value
	}
	var kernelRoots []string
	if s.Policy.Mode == policy.WorkspaceWrite {
		kernelRoots = sandbox.RootPaths(roots)
	}
	return &wire.Record{Values: values, Roots: kernelRoots, ConfigFiles: s.Policy.ConfigFiles,
		Supervisor: os.Getpid(), SupervisorStart: selfStart(), SupervisorPidNS: selfPidNS()}
}

// selfPidNS is this process's pid namespace (wire.PidNamespace): a
// record's supervisor pid means something only there.
var selfPidNS = sync.OnceValue(func() uint64 {
	ns, _ := wire.PidNamespace()
	return ns
})

// selfStart is this process's start time (wire.StartTime), computed
// once: the record names its supervisor by pid and start.
var selfStart = sync.OnceValue(func() uint64 {
	start, _ := wire.StartTime(os.Getpid())
	return start
})
