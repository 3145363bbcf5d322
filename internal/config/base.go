package config

// The trusted sources and the base policy (docs/design.md §2): the record
// of the exec session this call runs in, the system file, the user's
// file, exec's --config and a trusted command line, folded over the
// defaults into the base values and capped by the managed requirements.

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// readPinned reads the session record DSH_FS_SESSION names, if any. A
// record the session could have written, or one that is malformed, is a
// denial: the call never falls back to a policy of its own choosing.
func (l *loader) readPinned() error {
	path, ok := l.src.LookupEnv(wire.Env)
	if !ok || path == "" {
		return nil
	}
	refuse := func(why string) error {
		return &policy.DeniedError{Mode: policy.ReadOnly, Reason: policy.ReasonSessionRecord,
			Matched: wire.Env + "=" + path + ": " + why}
	}
	rec, err := wire.Read(path)
	if err != nil {
		var re *wire.RefusedError
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
// --config, absolute from the process's working directory, or "" when there is
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

// absolute makes the path values of a trusted command line absolute from
// the process's working directory, the one the harness started it in.
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
	for _, k := range []Key{KeyWritableRoots, KeyAllowRoots, KeyWorkspaces, KeyCwd, KeyCaches, KeyAuditLog} {
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
			case KeyTmp, KeyAllowIoUring:
				if v.value == false {
					l.base[k] = v
				}
			case KeyNetwork:
				// A ceiling: the requirements narrow the network,
				// never open it.
				if !network(v).Wider(network(l.base[k])) {
					l.base[k] = v
				}
			default: // approval, approval_command, approval_timeout, allow_roots, workspaces, allow_unix_sockets, audit_log
				l.base[k] = v
			}
		}
	}
	if l.base[KeyApproval].value == string(policy.ApprovalCommand) && len(asList(l.base[KeyApprovalCommand].value)) == 0 {
		a := l.base[KeyApproval]
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key approval: command needs approval_command", a.origin.Name))
	}
	if l.base[KeyNetworkApproval].value == string(policy.NetworkApprovalCommand) && len(asList(l.base[KeyApprovalCommand].value)) == 0 {
		a := l.base[KeyNetworkApproval]
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key network_approval: command needs approval_command", a.origin.Name))
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
		for _, k := range []Key{KeyDenyRead, KeyProtected, KeyProtectedExtra, KeyWorkspaces, KeyAllowRoots, KeyWritableRoots, KeyAllowUnixSockets, KeyCaches, KeyAuditLog} {
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

func mode(v sourced) policy.Mode { return policy.Mode(v.value.(string)) }

func network(v sourced) policy.Network { return policy.Network(v.value.(string)) }

// defaultNetwork makes a network no source set follow the mode of vals
// (policy.DefaultNetwork): on in danger-full-access, off otherwise. It
// runs on the base, then on the effective values, so a session that
// narrows the mode narrows the default network with it.
func (l *loader) defaultNetwork(vals map[Key]sourced) {
	if n := vals[KeyNetwork]; n.origin.Source == KindDefault {
		n.value = string(policy.DefaultNetwork(mode(vals[KeyMode])))
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
