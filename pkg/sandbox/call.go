package sandbox

// The one file of this package that uses dsh-fs's internal packages: the
// start of a call as the command makes it (config.Load), and the kernel
// layer that only RestrictProcess applies.

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	isandbox "github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/pkg/internal/handoff"
)

// state is what Open loaded: the settings of every call, whose policy
// never turns the kernel layer on (embedded), and the policy as loaded,
// for RestrictProcess.
type state struct {
	embedded *config.Settings
	loaded   policy.Policy
}

func init() {
	handoff.Register(func(sb any) (*config.Settings, error) {
		s, ok := sb.(*Sandbox)
		if !ok || s == nil || s.st == nil {
			return nil, fserr.New(fserr.InvalidArgument, "sandbox: no sandbox: call sandbox.Open")
		}
		return s.st.embedded, nil
	})
}

// load is config.Load with the options as the command line's session
// flags, the process's environment and the trusted files at this build's
// places, as the dsh-fs command's start of a call reads them.
func load(opt Options) (*state, error) {
	fs := pflag.NewFlagSet("dsh-fs", pflag.ContinueOnError)
	fs.String(config.FlagMode, "", "")
	fs.String(config.FlagCwd, "", "")
	fs.StringArray(config.FlagWritableRoot, nil, "")
	fs.String(config.FlagConfig, "", "")
	config.MarkSetting(fs, config.FlagMode, config.FlagCwd, config.FlagWritableRoot)
	set := func(name, value string) error {
		if value == "" {
			return nil
		}
		return fs.Set(name, value)
	}
	err := errors.Join(set(config.FlagMode, string(opt.Mode)), set(config.FlagCwd, opt.Dir), set(config.FlagConfig, opt.ConfigFile))
	for _, r := range opt.WritableRoots {
		err = errors.Join(err, fs.Set(config.FlagWritableRoot, r))
	}
	if err != nil {
		return nil, fserr.Wrap(fserr.InvalidArgument, "sandbox: "+err.Error(), err)
	}
	s, err := config.Load(config.Source{Flags: fs})
	if err != nil {
		return nil, err
	}
	st := &state{loaded: s.Policy}
	embedded := *s
	embedded.Policy.Enforce = policy.EnforceOff
	st.embedded = &embedded
	return st, nil
}

func (st *state) mode() Mode  { return Mode(st.loaded.Mode) }
func (st *state) dir() string { return st.loaded.Cwd }

func (st *state) writableRoots() []string {
	if st.loaded.Mode != policy.WorkspaceWrite {
		return []string{}
	}
	roots, err := isandbox.WritableRoots(st.loaded)
	if err != nil {
		return []string{}
	}
	return isandbox.RootPaths(roots)
}

// restrict applies the kernel layer to the process, as a mutation of the
// command does (sandbox.Fence.Enforce), with enforce raised to landlock.
func (st *state) restrict() error {
	p := st.loaded
	p.Enforce = policy.EnforceLandlock
	return isandbox.NewFence(p).Enforce()
}

func codeOf(err error) string { return string(fserr.CodeOf(err)) }
