package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// Origin says where a setting's value came from.
type Origin struct {
	// Source is "flag", "env", "file" or "default".
	Source string `json:"origin"`
	// Name is the flag ("--mode"), the variable ("DSH_FS_MODE") or the
	// config file's path; empty for a default.
	Name string `json:"from,omitempty"`
}

// Value is one setting's effective value and its origin.
type Value struct {
	Key   Key `json:"key"`
	Value any `json:"value"`
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
}

// Source is what Load reads. Flags may lack flags a command does not have.
type Source struct {
	Flags     *pflag.FlagSet
	LookupEnv func(string) (string, bool)
	Getwd     func() (string, error)
}

// Load resolves every setting by precedence, flag > environment > config
// file > default, and builds the policy. A malformed config file, an
// unknown key, a value of the wrong type or a bad name is FS_CONFIG_INVALID
// naming the key and the file; nothing ever falls back silently to a wider
// policy. A session override of the mode (flag or environment) wider than
// max_mode is a *sandbox.DeniedError with reason "above max_mode".
func Load(src Source) (*Settings, error) {
	if src.LookupEnv == nil {
		src.LookupEnv = os.LookupEnv
	}
	if src.Getwd == nil {
		src.Getwd = os.Getwd
	}
	l := &loader{src: src}
	if err := l.readFile(); err != nil {
		return nil, err
	}
	for _, s := range settings {
		v, err := l.resolve(s)
		if err != nil {
			return nil, err
		}
		l.values = append(l.values, v)
	}
	return l.build()
}

type loader struct {
	src      Source
	file     string
	fileKeys map[string]any
	values   []Value
}

// configPath finds the config file: --config, DSH_FS_CONFIG, then the XDG
// and system locations when a file is there. explicit is true when the
// caller named the file, which must then exist.
func (l *loader) configPath() (path string, explicit bool) {
	if f := l.flag(FlagConfig); f != nil && f.Changed {
		return f.Value.String(), true
	}
	if p, ok := l.src.LookupEnv(EnvConfig); ok && p != "" {
		return p, true
	}
	xdg, ok := l.src.LookupEnv("XDG_CONFIG_HOME")
	if !ok || xdg == "" {
		if home, err := os.UserHomeDir(); err == nil {
			xdg = filepath.Join(home, ".config")
		}
	}
	for _, p := range []string{filepath.Join(xdg, "dsh-fs", "config.yaml"), "/etc/dsh-fs/config.yaml"} {
		if _, err := os.Stat(p); err == nil {
			return p, false
		}
	}
	return "", false
}

func (l *loader) readFile() error {
	path, explicit := l.configPath()
	if path == "" {
		return nil
	}
	if _, err := os.Stat(path); err != nil {
		if explicit && errors.Is(err, fs.ErrNotExist) {
			return fserr.New(fserr.ConfigInvalid, "config "+path+": no such file")
		}
		return fserr.Wrap(fserr.ConfigInvalid, "config "+path+": "+err.Error(), err)
	}
	abs, err := filepath.Abs(path)
	if err == nil {
		path = abs
	}
	v := viper.New()
	v.SetConfigFile(path)
	switch strings.TrimPrefix(filepath.Ext(path), ".") {
	case "yaml", "yml", "json", "toml":
	default:
		v.SetConfigType("yaml")
	}
	if err := v.ReadInConfig(); err != nil {
		return fserr.Wrap(fserr.ConfigInvalid, "config "+path+": malformed: "+oneLine(err.Error()), err)
	}
	l.file = path
	l.fileKeys = map[string]any{}
	for _, k := range v.AllKeys() {
		if !known(Key(k)) {
			return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: unknown key %q", path, k))
		}
		l.fileKeys[k] = v.Get(k)
	}
	return nil
}

func known(k Key) bool {
	for _, s := range settings {
		if s.key == k {
			return true
		}
	}
	return false
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (l *loader) flag(name string) *pflag.Flag {
	if l.src.Flags == nil || name == "" {
		return nil
	}
	return l.src.Flags.Lookup(name)
}

// flagTypes are the pflag type names of each kind. A command's own flag
// may share a setting flag's name with another meaning (policy --context
// is a switch, write --context a number of lines); it is not the setting.
var flagTypes = map[kind]string{kindString: "string", kindBool: "bool", kindInt: "int", kindList: "stringArray"}

func (l *loader) settingFlag(s setting) *pflag.Flag {
	f := l.flag(s.flag)
	if f == nil || f.Value.Type() != flagTypes[s.kind] {
		return nil
	}
	return f
}

// resolve finds one setting's value by precedence. Every source that sets
// it is checked, the overridden ones too: a bad value in the config file
// is an error even on a call that overrides it, so a broken deployment is
// found on the first call rather than on the first call without the
// override.
func (l *loader) resolve(s setting) (Value, error) {
	v := Value{s.key, s.def, Origin{Source: "default"}}
	if raw, ok := l.fileKeys[string(s.key)]; ok {
		x, err := fileValue(s, raw)
		if err == nil {
			err = validate(s.key, x)
		}
		if err != nil {
			return Value{}, fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key %s: %v", l.file, s.key, err))
		}
		v = Value{s.key, x, Origin{"file", l.file}}
	}
	if s.env != "" {
		// An empty variable is unset: harnesses blank what they mean
		// to leave to the defaults.
		if raw, ok := l.src.LookupEnv(s.env); ok && raw != "" {
			x, err := parseEnv(s, raw)
			if err == nil {
				err = validate(s.key, x)
			}
			if err != nil {
				return Value{}, fserr.New(fserr.ConfigInvalid, fmt.Sprintf("env %s: %v", s.env, err))
			}
			v = Value{s.key, x, Origin{"env", s.env}}
		}
	}
	if f := l.settingFlag(s); f != nil && f.Changed {
		x, err := flagValue(l.src.Flags, s)
		if err == nil {
			err = validate(s.key, x)
		}
		if err != nil {
			return Value{}, fserr.Wrap(fserr.InvalidArgument, fmt.Sprintf("flag --%s: %v", s.flag, err), err)
		}
		v = Value{s.key, x, Origin{"flag", "--" + s.flag}}
	}
	return v, nil
}

// validate checks a value beyond its type: names from a fixed set, sizes
// that cannot be negative.
func validate(k Key, v any) error {
	var err error
	switch k {
	case KeyMode, KeyMaxMode:
		_, err = sandbox.ParseMode(v.(string))
	case KeyApproval:
		_, err = sandbox.ParseApproval(v.(string))
	case KeyEnforce:
		_, err = sandbox.ParseEnforce(v.(string))
	case KeyOutput:
		if o := v.(string); o != "json" && o != "text" {
			err = fmt.Errorf("unknown output %q (want json or text)", o)
		}
	case KeyDiffBasisMaxBytes, KeyDiffMaxBytes, KeyDiffContext, KeyReadMaxLines, KeyReadMaxBytes:
		if n := v.(int); n < 0 {
			err = fmt.Errorf("want zero or more, got %d", n)
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
		return parseInt(raw)
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

func parseInt(raw string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(raw))
	if err != nil {
		return 0, fmt.Errorf("want a whole number, got %q", raw)
	}
	return n, nil
}

// fileValue checks the type of a value read from the config file. Viper
// hands over YAML, TOML and JSON values alike as any.
func fileValue(s setting, raw any) (any, error) {
	switch s.kind {
	case kindBool:
		if b, ok := raw.(bool); ok {
			return b, nil
		}
		return nil, fmt.Errorf("want true or false, got %v", raw)
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
		return nil, fmt.Errorf("want a whole number, got %v", raw)
	case kindList:
		items, ok := raw.([]any)
		if !ok {
			if ss, ok := raw.([]string); ok {
				return ss, nil
			}
			return nil, fmt.Errorf("want a list of strings, got %v", raw)
		}
		out := make([]string, 0, len(items))
		for _, it := range items {
			str, ok := it.(string)
			if !ok {
				return nil, fmt.Errorf("want a list of strings, got item %v", it)
			}
			out = append(out, str)
		}
		return out, nil
	}
	if str, ok := raw.(string); ok {
		return str, nil
	}
	return nil, fmt.Errorf("want a string, got %v", raw)
}

func (l *loader) value(k Key) *Value {
	for i := range l.values {
		if l.values[i].Key == k {
			return &l.values[i]
		}
	}
	panic("config: no setting " + string(k))
}

// build checks the values against each other and makes the Settings.
func (l *loader) build() (*Settings, error) {
	bad := func(v *Value, err error) error {
		where := v.Origin.Source
		switch v.Origin.Source {
		case "flag":
			return fserr.New(fserr.InvalidArgument, fmt.Sprintf("flag %s: %v", v.Name, err))
		case "env":
			where = "env " + v.Name
		case "file":
			where = "config " + v.Name + ": key " + string(v.Key)
		}
		return fserr.New(fserr.ConfigInvalid, fmt.Sprintf("%s: %v", where, err))
	}
	str := func(k Key) string { return l.value(k).Value.(string) }
	num := func(k Key) int { return l.value(k).Value.(int) }
	list := func(k Key) []string {
		if v, ok := l.value(k).Value.([]string); ok {
			return v
		}
		return nil
	}

	// validate has checked every name: these parse.
	mode, _ := sandbox.ParseMode(str(KeyMode))
	maxMode, _ := sandbox.ParseMode(str(KeyMaxMode))
	approval, _ := sandbox.ParseApproval(str(KeyApproval))
	enforce, _ := sandbox.ParseEnforce(str(KeyEnforce))
	output := str(KeyOutput)
	cwd, err := l.cwd()
	if err != nil {
		return nil, bad(l.value(KeyCwd), err)
	}
	l.value(KeyCwd).Value = cwd

	protected := list(KeyProtected)
	if protected == nil {
		protected = sandbox.DefaultProtected
		l.value(KeyProtected).Value = protected
	}
	protected = append(slices.Clip(protected), list(KeyProtectedExtra)...)

	modeValue := l.value(KeyMode)
	if mode.Wider(maxMode) {
		if modeValue.Source == "file" || modeValue.Source == "default" {
			return nil, bad(modeValue, fmt.Errorf("mode %s is wider than max_mode %s", mode, maxMode))
		}
		return nil, &sandbox.DeniedError{Mode: maxMode, Reason: sandbox.ReasonAboveMaxMode,
			Matched: modeValue.Name + " " + string(mode), MaxMode: maxMode, Approval: approval}
	}

	return &Settings{
		Policy: sandbox.Policy{
			Mode:          mode,
			Cwd:           cwd,
			WritableRoots: list(KeyWritableRoots),
			Tmp:           l.value(KeyTmp).Value.(bool),
			Protected:     protected,
			DenyRead:      list(KeyDenyRead),
			MaxMode:       maxMode,
			Approval:      approval,
			Enforce:       enforce,
			ConfigFile:    l.file,
		},
		DiffBasisMaxBytes: int64(num(KeyDiffBasisMaxBytes)),
		DiffMaxBytes:      num(KeyDiffMaxBytes),
		DiffContext:       num(KeyDiffContext),
		ReadMaxLines:      num(KeyReadMaxLines),
		ReadMaxBytes:      num(KeyReadMaxBytes),
		Output:            output,
		Values:            l.values,
	}, nil
}

// cwd returns the canonical session cwd, which must be an existing folder.
func (l *loader) cwd() (string, error) {
	wd, err := l.src.Getwd()
	if err != nil {
		return "", fmt.Errorf("cannot get the working directory: %v", err)
	}
	raw := l.value(KeyCwd).Value.(string)
	if raw == "" {
		raw = wd
	}
	canon, err := sandbox.Canonical(wd, raw)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(canon)
	if err != nil {
		return "", fmt.Errorf("%s: no such folder", raw)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%s: not a folder", raw)
	}
	return canon, nil
}
