package config

// The session sources and their narrowing (docs/design.md §2): a session
// config file, the DSH_FS_* variables and the flags, applied on top of the
// base, each value refused with a denial naming its source when it would
// widen the base.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

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
	fence := sandbox.NewFence(policy.Policy{Mode: mode(l.base[KeyMode]), Cwd: wd, Home: l.home, DenyRead: asList(l.base[KeyDenyRead].value)})
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
	denyRaw := func(needed policy.Mode, raw string) error {
		return &policy.DeniedError{Mode: mode(l.base[KeyMode]), Reason: policy.ReasonSessionWiden,
			Matched: v.origin.describe(s.key, raw), Needed: needed,
			MaxMode: mode(l.base[KeyMaxMode]), Approval: policy.Approval(l.base[KeyApproval].value.(string))}
	}
	deny := func(needed policy.Mode) error { return denyRaw(needed, v.raw) }
	if s.trustedOnly {
		return deny("")
	}
	switch s.key {
	case KeyMode:
		if m := policy.Mode(v.value.(string)); m.Wider(mode(base)) {
			return deny(m)
		}
	case KeyTmp:
		if v.value == true && base.value == false {
			return deny(policy.DangerFullAccess)
		}
	case KeyEnforce:
		if policy.Enforce(v.value.(string)).Weaker(policy.Enforce(base.value.(string))) {
			return deny(policy.DangerFullAccess)
		}
	case KeyProtected:
		keep := asList(base.value)
		if keep == nil {
			keep = policy.DefaultProtected
		}
		for _, g := range keep {
			if !slices.Contains(asList(v.value), g) {
				return deny(policy.DangerFullAccess)
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
			return deny(policy.DangerFullAccess)
		}
	case KeyWritableRoots:
		return l.checkSessionRoots(v, denyRaw)
	case KeyCachesFromToolchains, KeyAllowIoUring:
		if v.value == true && base.value == false {
			return deny("")
		}
	case KeyCachesWritable:
		if policy.CachesWritableWider(v.value.(string), base.value.(string)) {
			return deny("")
		}
	case KeyNetwork:
		if policy.Network(v.value.(string)).Wider(network(base)) {
			return deny("")
		}
	case KeyNetworkApproval:
		if v.value != string(policy.NetworkApprovalNone) && v.value != base.value {
			return deny("")
		}
	case KeyCaches, KeyAllowUnixSockets, KeyNetworkAllow, KeyReadHome:
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
func (l *loader) checkSessionRoots(v sourced, deny func(needed policy.Mode, raw string) error) error {
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
			return deny(policy.DangerFullAccess, r)
		}
	}
	return nil
}
