package config

// One value from each kind of source: the flags marked as settings, the
// DSH_FS_* variables and the config files' values, read into their
// setting's type and checked beyond it (validate).

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
)

// flagLayer reads the setting flags that were set into a layer of kind k.
// A trusted command line's relative paths are made absolute from the
// process's working directory, as a trusted file's must be absolute.
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
		_, err = policy.ParseMode(v.(string))
	case KeyApproval:
		_, err = policy.ParseApproval(v.(string))
	case KeyEnforce:
		_, err = policy.ParseEnforce(v.(string))
	case KeyNetwork:
		_, err = policy.ParseNetwork(v.(string))
	case KeyNetworkApproval:
		_, err = policy.ParseNetworkApproval(v.(string))
	case KeyNetworkAllow:
		_, err = policy.ParseNetworkAllow(asList(v))
	case KeyNetworkUpstreamProxy:
		_, err = policy.ParseUpstreamProxy(v.(string))
	case KeyNetworkAllowCommands:
		_, err = policy.ParseCommandGrants(asList(v))
	case KeyNetworkUpstreamProxyAuthFile:
		if f := v.(string); f != "" && !filepath.IsAbs(f) {
			err = fmt.Errorf("not an absolute path (want the absolute path of a file holding user:password)")
		}
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
			if err = policy.CheckGlob(g); err != nil {
				break
			}
		}
	case KeyCachesWritable:
		if w := v.(string); w != policy.CachesOff && w != policy.CachesOverlay && w != policy.CachesDirect {
			err = fmt.Errorf("unknown caches_writable %q (want overlay, direct or off)", w)
		}
	case KeyExplainDenials:
		if w := v.(string); w != ExplainInline && w != ExplainLog && w != ExplainOff {
			err = fmt.Errorf("unknown explain_denials %q (want inline, log or off)", w)
		}
	case KeyCaches:
		for _, g := range asList(v) {
			if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "~/") && g != "~" {
				return fmt.Errorf("%q is not absolute; name a cache folder by its absolute path (or ~/…)", g)
			}
		}
	case KeyReadHome:
		// Entries of the home folder, by name: the view binds them back
		// as they are, no glob.
		for _, g := range asList(v) {
			if !strings.HasPrefix(g, "~/") || strings.ContainsAny(g, "*?[\\") || slices.Contains(strings.Split(g, "/"), "..") {
				return fmt.Errorf("%q is not a path beneath the home folder; name an entry of it as ~/… (no wildcard, no ..)", g)
			}
		}
	case KeyAllowUnixSockets:
		// Relative to a cwd the session picks, an entry would name a
		// socket of the session's choosing.
		for _, g := range asList(v) {
			if !strings.HasPrefix(g, "/") && !strings.HasPrefix(g, "~/") {
				return fmt.Errorf("%q is not absolute; name a socket by its absolute path (or ~/…)", g)
			}
			if err = policy.CheckGlob(g); err != nil {
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

// fileValue checks the type of a value read from a config file.
// decodeConfig hands over YAML, TOML and JSON values alike as any. Its errors name the
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
