package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// Value is one setting's effective value and its origin.
type Value struct {
	Key   Key `json:"key"`
	Value any `json:"value"`
	Origin
}

// File is a config file this call loaded.
type File struct {
	Path string `json:"path"`
	Origin
}

// Settings are the effective settings of one call.
type Settings struct {
	Policy            policy.Policy
	DiffBasisMaxBytes int64
	DiffMaxBytes      int
	DiffContext       int
	ReadMaxLines      int
	ReadMaxBytes      int
	Output            string
	// Values lists every setting with its origin, in table order.
	Values []Value
	// Files are the config files loaded, lowest precedence first.
	Files []File
	// Caches are the toolchain cache settings of dsh-fs exec.
	Caches Caches
	// AuditLog is the file a dsh-fs exec supervisor appends the
	// session's audit trail to, "~" expanded; "" for none.
	AuditLog string
	// ExplainDenials is what a dsh-fs exec supervisor does with a
	// refusal in the shell's output (ExplainInline, ExplainLog,
	// ExplainOff).
	ExplainDenials string
	// Session is the record of the dsh-fs exec session this call runs
	// in, read from SessionPath; nil outside a session.
	Session     *wire.Record
	SessionPath string
}

// Source is what Load reads. Flags may lack flags a command does not have.
type Source struct {
	Flags     *pflag.FlagSet
	LookupEnv func(string) (string, bool)
	Getwd     func() (string, error)
	// Locations are the trusted files' places; zero means
	// DefaultLocations.
	Locations Locations
	// FlagsTrusted says Flags were typed by the harness, not the model:
	// they are then a KindCommandLine source, trusted, applied after the
	// user's file and capped by the managed requirements, and their
	// relative paths are taken from the process's working directory. Only
	// `dsh-fs mcp` sets it (docs/design.md §2.1).
	FlagsTrusted bool
	// ConfigTrusted says the --config file of a trusted command line is
	// the trusted base of a session (KindExecConfig), not a session file
	// that may only narrow: `dsh-fs exec` sets it, whose record pins the
	// policy for that session alone. It means nothing without
	// FlagsTrusted, or inside a session.
	ConfigTrusted bool
}

// layer is one source's values.
type layer struct {
	kind   Kind
	name   string // a file's path
	values map[Key]sourced
}

// sourced is one value and where it came from; raw is how the source
// spelled it, for a denial's "matched".
type sourced struct {
	value  any
	origin Origin
	raw    string
}

// Load resolves every setting of one call (docs/design.md §2). The trusted
// sources — built-in defaults, the system file, the user's file, capped by
// the managed requirements — make the base policy. The session sources —
// a session config file, DSH_FS_* variables, flags — are applied on top
// and may only narrow it: a session value that would widen it is a
// *policy.DeniedError with reason "session cannot widen the policy"
// naming the source, never a silent clamp. A malformed file, an unknown
// key, a value of the wrong type, a bad name or a malformed glob is
// FS_CONFIG_INVALID naming the key and the file, and quotes nothing a
// file holds beyond a key's name.
func Load(src Source) (*Settings, error) {
	if src.LookupEnv == nil {
		src.LookupEnv = os.LookupEnv
	}
	if src.Getwd == nil {
		src.Getwd = os.Getwd
	}
	if src.Locations.SystemDir == "" {
		src.Locations = DefaultLocations()
	}
	l := &loader{src: src}
	if home, err := src.Locations.Home(); err == nil && filepath.IsAbs(home) {
		l.home = filepath.Clean(home)
	}
	if err := l.readPinned(); err != nil {
		return nil, err
	}
	if err := l.readTrusted(); err != nil {
		return nil, err
	}
	if err := l.resolveBase(); err != nil {
		return nil, err
	}
	if err := l.readSession(); err != nil {
		return nil, err
	}
	if err := l.applySession(); err != nil {
		return nil, err
	}
	return l.build()
}

type loader struct {
	src  Source
	home string

	trusted []*layer // system, user: base values
	managed *layer
	session []*layer // file, env, flag: narrowing only
	files   []File

	// base and eff hold the base (trusted) and effective value of each
	// setting, in table order.
	base, eff map[Key]sourced
	// cwdSource names the session source of the cwd, for denials.
	cwdSource string

	// pinned is the record of the exec session this call runs in, read
	// from pinnedPath.
	pinned     *wire.Record
	pinnedPath string
}

func expandHome(home, p string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return home + p[1:]
	}
	return p
}

// canonicalCwd resolves a cwd setting against the process's working directory.
func (l *loader) canonicalCwd(raw string) (string, error) {
	wd, err := l.src.Getwd()
	if err != nil {
		return "", fserr.New(fserr.ConfigInvalid, fmt.Sprintf("cannot get the working directory: %v", err))
	}
	if raw == "" {
		raw = wd
	}
	canon, err := sandbox.Canonical(wd, expandHome(l.home, raw))
	if err != nil {
		return "", err
	}
	// The errors carry the code a path argument's would (FS_NOT_FOUND,
	// FS_NOT_DIR): bad names it, and keeps it for a flag.
	fi, err := os.Stat(canon)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fserr.Wrap(fserr.NotFound, raw+": no such folder", err)
	case errors.Is(err, syscall.ENOTDIR):
		return "", fserr.Wrap(fserr.NotDir, raw+": not a folder", err)
	case err != nil:
		return "", fserr.FromOS("cwd", raw, err)
	case !fi.IsDir():
		return "", fserr.New(fserr.NotDir, raw+": not a folder")
	}
	return canon, nil
}

// policy makes the sandbox policy of the values vals.
func (l *loader) policy(vals map[Key]sourced) (policy.Policy, error) {
	str := func(k Key) string { return vals[k].value.(string) }
	cwdVal := vals[KeyCwd]
	cwd, err := l.canonicalCwd(str(KeyCwd))
	if err != nil {
		return policy.Policy{}, l.bad(cwdVal, err)
	}
	protected := asList(vals[KeyProtected].value)
	if protected == nil {
		protected = policy.DefaultProtected
	}
	protected = append(slices.Clip(protected), asList(vals[KeyProtectedExtra].value)...)
	var roots []string
	for _, r := range asList(vals[KeyWritableRoots].value) {
		roots = append(roots, expandHome(l.home, r))
	}
	// validate has checked every name: these parse.
	m, _ := policy.ParseMode(str(KeyMode))
	maxMode, _ := policy.ParseMode(str(KeyMaxMode))
	approval, _ := policy.ParseApproval(str(KeyApproval))
	enforce, _ := policy.ParseEnforce(str(KeyEnforce))
	net, _ := policy.ParseNetwork(str(KeyNetwork))
	netApproval, _ := policy.ParseNetworkApproval(str(KeyNetworkApproval))
	loc := l.src.Locations
	trustedFiles := []string{loc.SystemFile(), loc.RequirementsFile()}
	if u := loc.UserFile(l.home); u != "" {
		trustedFiles = append(trustedFiles, u)
	}
	if l.pinned != nil {
		// The files exec loaded (its --config among them) stay
		// protected for every call inside: the next session reads them.
		trustedFiles = append(trustedFiles, l.pinned.ConfigFiles...)
	}
	var loaded []string
	for _, f := range l.files {
		loaded = append(loaded, f.Path)
	}
	// Inside an exec session the workspace root stays the one exec
	// pinned, and relative paths are the shell's: `cd src && dsh-fs read
	// main.go` reads src/main.go.
	dir := ""
	if cwdVal.origin.Source == KindPinned {
		if wd, err := l.src.Getwd(); err == nil {
			if c, err := sandbox.Canonical("/", wd); err == nil && c != cwd {
				dir = c
			}
		}
	}
	var denyIDs []policy.DenyIdentity
	if l.pinned != nil {
		denyIDs = l.pinned.DenyIdentities
	}
	return policy.Policy{
		DenyIdentities:         denyIDs,
		Mode:                   m,
		Cwd:                    cwd,
		Dir:                    dir,
		CwdTrusted:             cwdVal.origin.Trust != TrustSession && cwdVal.origin.Source != KindDefault,
		CwdSource:              l.cwdSource,
		Workspaces:             asList(vals[KeyWorkspaces].value),
		AllowRoots:             asList(vals[KeyAllowRoots].value),
		WritableRoots:          roots,
		Tmp:                    vals[KeyTmp].value.(bool),
		Protected:              protected,
		DenyRead:               asList(vals[KeyDenyRead].value),
		MaxMode:                maxMode,
		Approval:               approval,
		ApprovalCommand:        asList(vals[KeyApprovalCommand].value),
		ApprovalTimeoutSeconds: vals[KeyApprovalTimeout].value.(int),
		Enforce:                enforce,
		AllowUnixSockets:       asList(vals[KeyAllowUnixSockets].value),
		ReadHome:               asList(vals[KeyReadHome].value),
		Network:                net,
		NetworkAllow:           asList(vals[KeyNetworkAllow].value),
		NetworkApproval:        netApproval,
		NetworkUpstreamProxy:   str(KeyNetworkUpstreamProxy),
		NetworkUpstreamNoProxy: asList(vals[KeyNetworkUpstreamNoProxy].value),
		NetworkAllowCommands:   asList(vals[KeyNetworkAllowCommands].value),
		NetworkUpstreamAuth:    str(KeyNetworkUpstreamProxyAuthFile),
		AllowIoUring:           vals[KeyAllowIoUring].value.(bool),
		Home:                   l.home,
		ConfigFiles:            loaded,
		TrustedFiles:           trustedFiles,
	}, nil
}

// bad is the error of a value that is well-formed but unusable.
func (l *loader) bad(v sourced, err error) error {
	switch v.origin.Source {
	case KindFlag, KindCommandLine:
		// A flag's folder that is not there, or is a file, fails as a
		// path argument would (exec --cwd: CMD never starts); anything
		// else a flag gets wrong is bad usage.
		code := fserr.InvalidArgument
		if c := fserr.CodeOf(err); c == fserr.NotFound || c == fserr.NotDir {
			code = c
		}
		return fserr.Wrap(code, fmt.Sprintf("flag %s: %v", v.origin.Name, err), err)
	case KindEnv:
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("env %s: %v", v.origin.Name, err))
	case KindDefault:
		return fserr.New(fserr.ConfigInvalid, err.Error())
	}
	return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key %s: %v", v.origin.Name, v.raw, err))
}

// build makes the Settings from the effective values.
func (l *loader) build() (*Settings, error) {
	p, err := l.policy(l.eff)
	if err != nil {
		return nil, err
	}
	num := func(k Key) int { return l.eff[k].value.(int) }
	values := make([]Value, 0, len(settings))
	for _, s := range settings {
		v := l.eff[s.key]
		x := v.value
		switch s.key {
		case KeyCwd:
			x = p.Cwd
		case KeyProtected:
			if x == nil {
				x = policy.DefaultProtected
			}
		}
		values = append(values, Value{Key: s.key, Value: x, Origin: v.origin})
	}
	return &Settings{
		Policy:            p,
		DiffBasisMaxBytes: int64(num(KeyDiffBasisMaxBytes)),
		DiffMaxBytes:      num(KeyDiffMaxBytes),
		DiffContext:       num(KeyDiffContext),
		ReadMaxLines:      num(KeyReadMaxLines),
		ReadMaxBytes:      num(KeyReadMaxBytes),
		Output:            l.eff[KeyOutput].value.(string),
		Caches:            l.caches(),
		AuditLog:          expandHome(l.home, l.eff[KeyAuditLog].value.(string)),
		ExplainDenials:    l.eff[KeyExplainDenials].value.(string),
		Values:            values,
		Files:             l.files,
		Session:           l.pinned,
		SessionPath:       l.pinnedPath,
	}, nil
}

// Caches are the settings of a dsh-fs exec session's toolchain caches
// (docs/design.md §10).
type Caches struct {
	// Paths are the caches the config names, "~" expanded.
	Paths []string
	// FromToolchains says exec asks the toolchains for theirs too
	// (toolchains.Find, in internal/session/toolchains).
	FromToolchains bool
	// Writable is how the shell may write them: policy.CachesOverlay,
	// CachesDirect or CachesOff.
	Writable string
}

func (l *loader) caches() Caches {
	var paths []string
	for _, p := range asList(l.eff[KeyCaches].value) {
		paths = append(paths, expandHome(l.home, p))
	}
	return Caches{Paths: paths, FromToolchains: l.eff[KeyCachesFromToolchains].value.(bool),
		Writable: l.eff[KeyCachesWritable].value.(string)}
}

// NarrowingEnv carries the session sources of this call's flags to the
// calls of a nested dsh-fs exec session, which share the outer session's
// record: each setting a flag set, as its DSH_FS_* variable, and the
// session file as DSH_FS_CONFIG. Variables are session sources too, so
// they narrow the record there exactly as the flags narrowed it here.
func (s *Settings) NarrowingEnv() []string {
	var env []string
	for _, v := range s.Values {
		st, ok := lookupSetting(v.Key)
		if !ok || st.env == "" || v.Source != KindFlag {
			continue
		}
		var text string
		switch x := v.Value.(type) {
		case []string:
			text = strings.Join(x, string(filepath.ListSeparator))
		default:
			text = fmt.Sprint(x)
		}
		env = append(env, st.env+"="+text)
	}
	for _, f := range s.Files {
		if f.Source == KindFile {
			env = append(env, EnvConfig+"="+f.Path)
		}
	}
	return env
}
