package config

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
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
	Policy            sandbox.Policy
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
	// Session is the record of the dsh-fs exec session this call runs
	// in, read from SessionPath; nil outside a session.
	Session     *session.Record
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
	// relative paths are taken from the process's directory. Only
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
// *sandbox.DeniedError with reason "session cannot widen the policy"
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
	pinned     *session.Record
	pinnedPath string
}

// readPinned reads the session record DSH_FS_SESSION names, if any. A
// record the session could have written, or one that is malformed, is a
// denial: the call never falls back to a policy of its own choosing.
func (l *loader) readPinned() error {
	path, ok := l.src.LookupEnv(session.Env)
	if !ok || path == "" {
		return nil
	}
	refuse := func(why string) error {
		return &sandbox.DeniedError{Mode: sandbox.ReadOnly, Reason: sandbox.ReasonSessionRecord,
			Matched: session.Env + "=" + path + ": " + why}
	}
	rec, err := session.Read(path)
	if err != nil {
		var re *session.RefusedError
		if errors.As(err, &re) {
			return refuse(re.Why)
		}
		return refuse(err.Error())
	}
	ly := &layer{kind: KindPinned, name: path, values: map[Key]sourced{}}
	for k, raw := range rec.Values {
		s, ok := lookupSetting(Key(k))
		if !ok {
			return refuse("unknown key " + shownKey(k))
		}
		x, err := fileValue(s, raw)
		if err == nil {
			err = validate(s.key, x)
		}
		if err != nil {
			return refuse(fmt.Sprintf("key %s: %v", k, err))
		}
		ly.values[s.key] = sourced{value: x, origin: origin(KindPinned, path), raw: string(s.key)}
	}
	l.pinned, l.pinnedPath = rec, path
	l.trusted = append(l.trusted, ly)
	l.files = append(l.files, File{Path: path, Origin: origin(KindPinned, path)})
	return nil
}

// flagsTrusted says the command line is a trusted source: the harness
// typed it (dsh-fs mcp, dsh-fs exec), and this call is not inside an exec
// session, whose model may type those commands too.
func (l *loader) flagsTrusted() bool { return l.src.FlagsTrusted && l.pinned == nil }

// execConfig returns the file a trusted exec command line names with
// --config, absolute from the process's directory, or "" when there is
// none or the command line is not trusted here (a session file then).
func (l *loader) execConfig() string {
	f := l.flag(FlagConfig)
	if !l.src.ConfigTrusted || !l.flagsTrusted() || f == nil || !f.Changed || f.Value.String() == "" {
		return ""
	}
	path := f.Value.String()
	if !filepath.IsAbs(path) {
		if wd, err := l.src.Getwd(); err == nil {
			path = filepath.Join(wd, path)
		}
	}
	return filepath.Clean(path)
}

// readExecConfig reads the file of exec --config as a trusted layer,
// after the user's: it must exist and pass the checks of every trusted
// file (checkTrusted, checkTrustedPaths).
func (l *loader) readExecConfig(path string) error {
	ly, err := readTrusted(KindExecConfig, path, nil)
	if err != nil {
		return err
	}
	if ly == nil {
		return fserr.New(fserr.ConfigInvalid, "config "+path+": no such file")
	}
	if err := l.checkTrustedPaths(ly); err != nil {
		return err
	}
	l.files = append(l.files, File{Path: path, Origin: origin(KindExecConfig, path)})
	l.trusted = append(l.trusted, ly)
	return nil
}

// readTrusted reads the system file, the user's file and the managed
// requirements, each when present.
func (l *loader) readTrusted() error {
	loc := l.src.Locations
	for _, f := range []struct {
		kind Kind
		path string
	}{{KindSystem, loc.SystemFile()}, {KindUser, loc.UserFile(l.home)}, {KindManaged, loc.RequirementsFile()}} {
		if f.path == "" || (l.pinned != nil && f.kind != KindManaged) {
			// A session's record replaces the system and user files:
			// exec resolved them once. The requirements still cap it.
			continue
		}
		var allowed []Key
		if f.kind == KindManaged {
			allowed = managedKeys
		}
		ly, err := readTrusted(f.kind, f.path, allowed)
		if err != nil {
			return err
		}
		if ly == nil {
			continue
		}
		if err := l.checkTrustedPaths(ly); err != nil {
			return err
		}
		l.files = append(l.files, File{Path: f.path, Origin: origin(f.kind, f.path)})
		if f.kind == KindManaged {
			l.managed = ly
		} else {
			l.trusted = append(l.trusted, ly)
		}
	}
	if path := l.execConfig(); path != "" {
		if err := l.readExecConfig(path); err != nil {
			return err
		}
	}
	if l.flagsTrusted() {
		ly, err := l.flagLayer(KindCommandLine)
		if err != nil {
			return err
		}
		l.trusted = append(l.trusted, ly)
	}
	return nil
}

// flagLayer reads the setting flags that were set into a layer of kind k.
// A trusted command line's relative paths are made absolute from the
// process's directory, as a trusted file's must be absolute.
func (l *loader) flagLayer(k Kind) (*layer, error) {
	ly := &layer{kind: k, values: map[Key]sourced{}}
	for _, s := range settings {
		f := l.settingFlag(s)
		if f == nil || !f.Changed {
			continue
		}
		x, err := flagValue(l.src.Flags, s)
		if err == nil {
			err = validate(s.key, x)
		}
		if err != nil {
			return nil, fserr.Wrap(fserr.InvalidArgument, fmt.Sprintf("flag --%s: %v", s.flag, err), err)
		}
		if k == KindCommandLine {
			x = l.absolute(s.key, x)
		}
		ly.values[s.key] = sourced{value: x, origin: origin(k, "--"+s.flag), raw: f.Value.String()}
	}
	return ly, nil
}

// absolute makes the path values of a trusted command line absolute from
// the process's directory, the one the harness started it in.
func (l *loader) absolute(k Key, x any) any {
	if k != KeyCwd && k != KeyWritableRoots {
		return x
	}
	wd, err := l.src.Getwd()
	if err != nil {
		return x
	}
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) || p == "~" || strings.HasPrefix(p, "~/") {
			return p
		}
		return filepath.Join(wd, p)
	}
	if list, ok := x.([]string); ok {
		out := make([]string, len(list))
		for i, p := range list {
			out[i] = abs(p)
		}
		return out
	}
	return abs(x.(string))
}

// checkTrustedPaths refuses relative paths in a trusted file's path
// settings: relative to the session cwd, they would move with it.
func (l *loader) checkTrustedPaths(ly *layer) error {
	for _, k := range []Key{KeyWritableRoots, KeyAllowRoots, KeyWorkspaces, KeyCwd, KeyCaches} {
		v, ok := ly.values[k]
		if !ok {
			continue
		}
		var paths []string
		switch x := v.value.(type) {
		case string:
			paths = []string{x}
		case []string:
			paths = x
		}
		for _, p := range paths {
			if p != "" && !filepath.IsAbs(p) && p != "~" && !strings.HasPrefix(p, "~/") {
				return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key %s: %q is relative; a trusted file names absolute paths (or ~/…)", ly.name, k, p))
			}
		}
	}
	return nil
}

// resolveBase folds the defaults and the trusted files into the base
// values, then applies the managed requirements' ceilings.
func (l *loader) resolveBase() error {
	l.base = map[Key]sourced{}
	for _, s := range settings {
		l.base[s.key] = sourced{value: s.def, origin: origin(KindDefault, "")}
	}
	for _, ly := range l.trusted {
		for k, v := range ly.values {
			if accumulates(k) {
				v.value = union(l.base[k].value, v.value)
			}
			l.base[k] = v
		}
	}
	if m := l.managed; m != nil {
		for k, v := range m.values {
			switch k {
			case KeyMaxMode:
				if !mode(v).Wider(mode(l.base[k])) {
					l.base[k] = v
				}
			case KeyDenyRead, KeyProtectedExtra:
				v.value = union(l.base[k].value, v.value)
				l.base[k] = v
			case KeyTmp:
				if v.value == false {
					l.base[k] = v
				}
			case KeyNetwork:
				// A ceiling: the requirements narrow the network,
				// never open it.
				if !network(v).Wider(network(l.base[k])) {
					l.base[k] = v
				}
			default: // approval, approval_command, approval_timeout, allow_roots, workspaces, allow_unix_sockets
				l.base[k] = v
			}
		}
	}
	if l.base[KeyApproval].value == string(sandbox.ApprovalCommand) && len(asList(l.base[KeyApprovalCommand].value)) == 0 {
		a := l.base[KeyApproval]
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key approval: command needs approval_command", a.origin.Name))
	}
	if cmd := asList(l.base[KeyApprovalCommand].value); len(cmd) > 0 && !filepath.IsAbs(cmd[0]) {
		// Looked up on a PATH the session sets, it could be the model's
		// own program answering for the approver.
		c := l.base[KeyApprovalCommand]
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key approval_command: name the program by an absolute path", c.origin.Name))
	}
	// A "~" glob with no home in the user database would silently name
	// nothing: a secret meant to be hidden would not be.
	if l.home == "" {
		for _, k := range []Key{KeyDenyRead, KeyProtected, KeyProtectedExtra, KeyWorkspaces, KeyAllowRoots, KeyWritableRoots, KeyAllowUnixSockets, KeyCaches} {
			for _, g := range asList(l.base[k].value) {
				if g == "~" || strings.HasPrefix(g, "~/") {
					return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key %s: %s needs the home folder, and the user database names none", l.base[k].origin.Name, k, g))
				}
			}
		}
	}
	// The default mode stays within a trusted max_mode; a mode a trusted
	// file sets above it is a broken deployment, said at once.
	m, maxMode := l.base[KeyMode], l.base[KeyMaxMode]
	if mode(m).Wider(mode(maxMode)) {
		if m.origin.Source != KindDefault {
			return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key mode: %s is wider than max_mode %s (%s)",
				m.origin.Name, mode(m), mode(maxMode), originText(maxMode.origin)))
		}
		l.base[KeyMode] = sourced{value: string(mode(maxMode)), origin: maxMode.origin}
	}
	l.defaultNetwork(l.base)
	return nil
}

func originText(o Origin) string {
	if o.Name == "" {
		return string(o.Source)
	}
	return string(o.Source) + " " + o.Name
}

func mode(v sourced) sandbox.Mode { return sandbox.Mode(v.value.(string)) }

func network(v sourced) sandbox.Network { return sandbox.Network(v.value.(string)) }

// defaultNetwork makes a network no source set follow the mode of vals
// (sandbox.DefaultNetwork): on in danger-full-access, off otherwise. It
// runs on the base, then on the effective values, so a session that
// narrows the mode narrows the default network with it.
func (l *loader) defaultNetwork(vals map[Key]sourced) {
	if n := vals[KeyNetwork]; n.origin.Source == KindDefault {
		n.value = string(sandbox.DefaultNetwork(mode(vals[KeyMode])))
		vals[KeyNetwork] = n
	}
}

// accumulates reports whether a setting's values from several sources add
// up rather than replace each other: a secret or protected glob named
// anywhere stays named.
func accumulates(k Key) bool { return k == KeyDenyRead || k == KeyProtectedExtra }

func union(a, b any) []string {
	out := slices.Clone(asList(a))
	for _, x := range asList(b) {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

func asList(v any) []string {
	l, _ := v.([]string)
	return l
}

// readSession reads the session sources: a config file the call names
// (--config, DSH_FS_CONFIG) or finds through $XDG_CONFIG_HOME, the
// variables and the flags.
func (l *loader) readSession() error {
	if path, explicit := l.sessionFilePath(); path != "" {
		ly, err := l.readSessionFile(path, explicit)
		if err != nil {
			return err
		}
		if ly != nil {
			l.session = append(l.session, ly)
		}
	}
	env := &layer{kind: KindEnv, values: map[Key]sourced{}}
	for _, s := range settings {
		if s.env != "" {
			// An empty variable is unset: harnesses blank what they
			// mean to leave to the defaults.
			if raw, ok := l.src.LookupEnv(s.env); ok && raw != "" {
				x, err := parseEnv(s, raw)
				if err == nil {
					err = validate(s.key, x)
				}
				if err != nil {
					return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("env %s: %v", s.env, err))
				}
				env.values[s.key] = sourced{value: x, origin: origin(KindEnv, s.env), raw: raw}
			}
		}
	}
	l.session = append(l.session, env)
	if l.flagsTrusted() {
		return nil // read as the trusted command line
	}
	flags, err := l.flagLayer(KindFlag)
	if err != nil {
		return err
	}
	l.session = append(l.session, flags)
	return nil
}

// sessionFilePath finds the session config file: --config, DSH_FS_CONFIG,
// then $XDG_CONFIG_HOME/dsh-fs/config.yaml when that is set, present and
// not the user's trusted file. explicit is true when the call named the
// file, which must then exist.
func (l *loader) sessionFilePath() (path string, explicit bool) {
	if f := l.flag(FlagConfig); f != nil && f.Changed && l.execConfig() == "" {
		return f.Value.String(), true
	}
	if p, ok := l.src.LookupEnv(EnvConfig); ok && p != "" {
		return p, true
	}
	xdg, ok := l.src.LookupEnv("XDG_CONFIG_HOME")
	if !ok || xdg == "" {
		return "", false
	}
	p := filepath.Join(xdg, "dsh-fs", "config.yaml")
	if user := l.src.Locations.UserFile(l.home); user != "" && sameFile(p, user) {
		return "", false // the trusted user file, read already
	}
	if _, err := os.Stat(p); err != nil {
		return "", false
	}
	return p, false
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// readSessionFile reads a session config file. A file the trusted policy
// does not let this call read (deny_read) is refused before a byte of it
// is read, judged on what was opened.
func (l *loader) readSessionFile(path string, explicit bool) (*layer, error) {
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	f, real, err := openConfig(path)
	if err != nil {
		if explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, fserr.New(fserr.ConfigInvalid, "config "+path+": no such file")
		}
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fserr.Wrap(fserr.ConfigInvalid, "config "+path+": "+err.Error(), err)
	}
	defer f.Close()
	wd, _ := l.src.Getwd()
	fence := sandbox.NewFence(sandbox.Policy{Mode: mode(l.base[KeyMode]), Cwd: wd, Home: l.home, DenyRead: asList(l.base[KeyDenyRead].value)})
	// By the name given and the real path of what was opened, and by
	// identity: a hard link to a secret is the secret.
	opened := sandbox.Target{Given: path, Path: real}
	if err := fence.CheckRead("config", opened); err != nil {
		return nil, err
	}
	if err := fence.CheckReadOpened("config", opened, f); err != nil {
		return nil, err
	}
	ly, err := fileLayer(KindFile, path, f, nil)
	if err != nil {
		return nil, err
	}
	l.files = append(l.files, File{Path: path, Origin: origin(KindFile, path)})
	return ly, nil
}

func (l *loader) flag(name string) *pflag.Flag {
	if l.src.Flags == nil || name == "" {
		return nil
	}
	return l.src.Flags.Lookup(name)
}

// settingAnnotation marks a flag as the command-line source of a setting
// (MarkSetting). A command's own flag may share a setting flag's name with
// another meaning (grep --context is lines around a match, write --context
// the diff's; policy --context a switch): unmarked, it is not the setting.
const settingAnnotation = "dsh-fs/setting"

// MarkSetting marks the flags of fs named names as the flags of their
// settings, which Load then reads.
func MarkSetting(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, settingAnnotation, []string{"true"}); err != nil {
			panic("config: no flag --" + n + " to mark as a setting")
		}
	}
}

func (l *loader) settingFlag(s setting) *pflag.Flag {
	f := l.flag(s.flag)
	if f == nil || f.Annotations[settingAnnotation] == nil {
		return nil
	}
	return f
}

// applySession applies the session layers on top of the base, lowest
// precedence first, refusing any value that would widen the base.
func (l *loader) applySession() error {
	l.eff = maps.Clone(l.base)
	wd, err := l.src.Getwd()
	if err != nil {
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("cannot get the working directory: %v", err))
	}
	l.cwdSource = "working directory " + wd
	for _, ly := range l.session {
		for _, s := range settings {
			v, ok := ly.values[s.key]
			if !ok {
				continue
			}
			if err := l.narrows(s, v); err != nil {
				return err
			}
			if accumulates(s.key) {
				v.value = union(l.eff[s.key].value, v.value)
			}
			if s.key == KeyCwd {
				l.cwdSource = v.origin.describe(s.key, v.raw)
			}
			l.eff[s.key] = v
		}
	}
	l.defaultNetwork(l.eff)
	return nil
}

// narrows checks that the session value v of s does not widen the base
// policy, and returns the denial that names its source when it would.
func (l *loader) narrows(s setting, v sourced) error {
	base := l.base[s.key]
	denyRaw := func(needed sandbox.Mode, raw string) error {
		return &sandbox.DeniedError{Mode: mode(l.base[KeyMode]), Reason: sandbox.ReasonSessionWiden,
			Matched: v.origin.describe(s.key, raw), Needed: needed,
			MaxMode: mode(l.base[KeyMaxMode]), Approval: sandbox.Approval(l.base[KeyApproval].value.(string))}
	}
	deny := func(needed sandbox.Mode) error { return denyRaw(needed, v.raw) }
	if s.trustedOnly {
		return deny("")
	}
	switch s.key {
	case KeyMode:
		if m := sandbox.Mode(v.value.(string)); m.Wider(mode(base)) {
			return deny(m)
		}
	case KeyTmp:
		if v.value == true && base.value == false {
			return deny(sandbox.DangerFullAccess)
		}
	case KeyEnforce:
		if sandbox.Enforce(v.value.(string)).Weaker(sandbox.Enforce(base.value.(string))) {
			return deny(sandbox.DangerFullAccess)
		}
	case KeyProtected:
		keep := asList(base.value)
		if keep == nil {
			keep = sandbox.DefaultProtected
		}
		for _, g := range keep {
			if !slices.Contains(asList(v.value), g) {
				return deny(sandbox.DangerFullAccess)
			}
		}
	case KeyCwd:
		if base.origin.Source == KindDefault {
			return nil // the workspace rules decide (sandbox.WritableRoots)
		}
		pinned, err := l.canonicalCwd(base.value.(string))
		if err != nil {
			return err
		}
		wd, _ := l.src.Getwd()
		c, err := sandbox.Canonical(wd, v.value.(string))
		if err != nil || !sandbox.Beneath(pinned, c) {
			return deny(sandbox.DangerFullAccess)
		}
	case KeyWritableRoots:
		return l.checkSessionRoots(v, denyRaw)
	case KeyCachesFromToolchains:
		if v.value == true && base.value == false {
			return deny("")
		}
	case KeyCachesWritable:
		if sandbox.CachesWritableWider(v.value.(string), base.value.(string)) {
			return deny("")
		}
	case KeyNetwork:
		if sandbox.Network(v.value.(string)).Wider(network(base)) {
			return deny("")
		}
	case KeyCaches, KeyAllowUnixSockets, KeyNetworkAllow:
		// A session may drop entries from the trusted list, never add
		// one: each entry must be one of the trusted list's, as spelled.
		for _, g := range asList(v.value) {
			if !slices.Contains(asList(base.value), g) {
				return denyRaw("", g)
			}
		}
	}
	return nil
}

// checkSessionRoots allows each writable root a session adds only beneath
// an allow_roots entry or a root the trusted policy already makes
// writable.
func (l *loader) checkSessionRoots(v sourced, deny func(needed sandbox.Mode, raw string) error) error {
	// The trusted policy, with the cwd this call settled on: a root
	// beneath the workspace widens nothing, but the workspace counts only
	// when the trusted policy accepts it (not too broad, in workspaces).
	vals := maps.Clone(l.base)
	vals[KeyCwd] = l.eff[KeyCwd]
	base, err := l.policy(vals)
	if err != nil {
		return err
	}
	for _, r := range asList(v.value) {
		c, err := sandbox.Canonical(base.Cwd, expandHome(l.home, r))
		if err != nil {
			return fserr.Wrap(fserr.InvalidArgument, fmt.Sprintf("%s: %v", v.origin.describe(KeyWritableRoots, r), err), err)
		}
		ok, err := sandbox.AllowsSessionRoot(base, c)
		if err != nil {
			return err
		}
		if !ok {
			return deny(sandbox.DangerFullAccess, r)
		}
	}
	return nil
}

func expandHome(home, p string) string {
	if home != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		return home + p[1:]
	}
	return p
}

// canonicalCwd resolves a cwd setting against the process's directory.
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
func (l *loader) policy(vals map[Key]sourced) (sandbox.Policy, error) {
	str := func(k Key) string { return vals[k].value.(string) }
	cwdVal := vals[KeyCwd]
	cwd, err := l.canonicalCwd(str(KeyCwd))
	if err != nil {
		return sandbox.Policy{}, l.bad(cwdVal, err)
	}
	protected := asList(vals[KeyProtected].value)
	if protected == nil {
		protected = sandbox.DefaultProtected
	}
	protected = append(slices.Clip(protected), asList(vals[KeyProtectedExtra].value)...)
	var roots []string
	for _, r := range asList(vals[KeyWritableRoots].value) {
		roots = append(roots, expandHome(l.home, r))
	}
	// validate has checked every name: these parse.
	m, _ := sandbox.ParseMode(str(KeyMode))
	maxMode, _ := sandbox.ParseMode(str(KeyMaxMode))
	approval, _ := sandbox.ParseApproval(str(KeyApproval))
	enforce, _ := sandbox.ParseEnforce(str(KeyEnforce))
	net, _ := sandbox.ParseNetwork(str(KeyNetwork))
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
	var denyIDs []sandbox.DenyIdentity
	if l.pinned != nil {
		denyIDs = l.pinned.DenyIdentities
	}
	return sandbox.Policy{
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
		Network:                net,
		NetworkAllow:           asList(vals[KeyNetworkAllow].value),
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
				x = sandbox.DefaultProtected
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
	// (sandbox.FindCaches).
	FromToolchains bool
	// Writable is how the shell may write them: sandbox.CachesOverlay,
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

func lookupSetting(k Key) (setting, bool) {
	for _, s := range settings {
		if s.key == k {
			return s, true
		}
	}
	return setting{}, false
}

// validate checks a value beyond its type: names from a fixed set, sizes
// that cannot be negative, globs that are well-formed.
func validate(k Key, v any) error {
	var err error
	switch k {
	case KeyMode, KeyMaxMode:
		_, err = sandbox.ParseMode(v.(string))
	case KeyApproval:
		_, err = sandbox.ParseApproval(v.(string))
	case KeyEnforce:
		_, err = sandbox.ParseEnforce(v.(string))
	case KeyNetwork:
		_, err = sandbox.ParseNetwork(v.(string))
	case KeyNetworkAllow:
		_, err = sandbox.ParseNetworkAllow(asList(v))
	case KeyOutput:
		if o := v.(string); o != "json" && o != "text" {
			err = fmt.Errorf("unknown output %q (want json or text)", o)
		}
	case KeyDiffBasisMaxBytes, KeyDiffContext:
		// 0 has a meaning here: no diff, no context lines.
		if n := v.(int); n < 0 {
			err = fmt.Errorf("want zero or more, got %d", n)
		}
	case KeyDiffMaxBytes, KeyReadMaxLines, KeyReadMaxBytes:
		// A budget of 0 would be an empty page, or an unbounded one: it
		// means nothing, so it is refused (docs/design.md §2.2).
		if n := v.(int); n < 1 {
			err = fmt.Errorf("want 1 or more, got %d", n)
		}
	case KeyApprovalTimeout:
		if n := v.(int); n < 1 {
			err = fmt.Errorf("want one second or more, got %d", n)
		}
	case KeyProtected, KeyProtectedExtra, KeyDenyRead, KeyWorkspaces, KeyAllowRoots:
		for _, g := range asList(v) {
			if err = sandbox.CheckGlob(g); err != nil {
				break
			}
		}
	case KeyCachesWritable:
		if w := v.(string); w != sandbox.CachesOff && w != sandbox.CachesOverlay && w != sandbox.CachesDirect {
			err = fmt.Errorf("unknown caches_writable %q (want overlay, direct or off)", w)
		}
	case KeyCaches:
		for _, g := range asList(v) {
			if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "~/") && g != "~" {
				return fmt.Errorf("%q is not absolute; name a cache folder by its absolute path (or ~/…)", g)
			}
		}
	case KeyAllowUnixSockets:
		// Relative to a cwd the session picks, an entry would name a
		// socket of the session's choosing.
		for _, g := range asList(v) {
			if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "~/") {
				return fmt.Errorf("%q is not absolute; name a socket by its absolute path (or ~/…)", g)
			}
			if err = sandbox.CheckGlob(g); err != nil {
				break
			}
		}
	}
	return err
}

func flagValue(fs *pflag.FlagSet, s setting) (any, error) {
	switch s.kind {
	case kindBool:
		return fs.GetBool(s.flag)
	case kindInt:
		return fs.GetInt(s.flag)
	case kindList:
		return fs.GetStringArray(s.flag)
	}
	return fs.GetString(s.flag)
}

func parseEnv(s setting, raw string) (any, error) {
	switch s.kind {
	case kindBool:
		b, err := strconv.ParseBool(raw)
		if err != nil {
			return nil, fmt.Errorf("want true or false, got %q", raw)
		}
		return b, nil
	case kindInt:
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return nil, fmt.Errorf("want a whole number, got %q", raw)
		}
		return n, nil
	case kindList:
		var out []string
		for _, p := range filepath.SplitList(raw) {
			if p != "" {
				out = append(out, p)
			}
		}
		return out, nil
	}
	return raw, nil
}

// fileValue checks the type of a value read from a config file. Viper
// hands over YAML, TOML and JSON values alike as any. Its errors name the
// type found, never the value: the file may be a secret.
func fileValue(s setting, raw any) (any, error) {
	switch s.kind {
	case kindBool:
		if b, ok := raw.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("want true or false, got %s", typeName(raw))
	case kindInt:
		switch n := raw.(type) {
		case int:
			return n, nil
		case int64:
			return int(n), nil
		case float64:
			if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
				return int(n), nil
			}
		}
		return nil, fmt.Errorf("want a whole number, got %s", typeName(raw))
	case kindList:
		items, ok := raw.([]any)
		if !ok {
			if ss, ok := raw.([]string); ok {
				return ss, nil
			}
			return nil, fmt.Errorf("want a list of strings, got %s", typeName(raw))
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			str, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of strings, got an item that is %s", typeName(it))
			}
			out = append(out, str)
		}
		return out, nil
	}
	if str, ok := raw.(string); ok {
		return str, nil
	}
	return nil, fmt.Errorf("want a string, got %s", typeName(raw))
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "true or false"
	case int, int64, float64:
		return "a number"
	case []any, []string:
		return "a list"
	case map[string]any:
		return "a mapping"
	case nil:
		return "nothing"
	}
	return "another type"
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
