package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// Kind is the kind of a source of settings; it decides the source's trust
// (docs/design.md §2).
type Kind string

// The kinds of source, lowest precedence first.
const (
	KindDefault Kind = "default" // built in
	KindSystem  Kind = "system"  // <SystemDir>/config.yaml
	KindUser    Kind = "user"    // ~/.config/dsh-fs/config.yaml, home from the user database
	// KindCommandLine is the command line of a process a harness
	// starts from its own config, never the model: `dsh-fs mcp`'s flags
	// and folders (docs/design.md §2.1). Trusted, below the managed
	// requirements, which still cap it.
	KindCommandLine Kind = "command-line"
	// KindExecConfig is the file `dsh-fs exec --config FILE` names on
	// the harness's command line: the trusted base of that one session,
	// read after the user's file and before exec's other flags, held to
	// the rules of a trusted file and capped by the managed requirements
	// (docs/design.md §2.1, §10). Inside a session, --config is KindFile.
	KindExecConfig Kind = "exec-config"
	// KindPinned is the record of a dsh-fs exec session (DSH_FS_SESSION):
	// the policy exec resolved from its own trusted sources, in place of
	// the system and user files, for every call inside (docs/design.md
	// §10). Read only where the session could not have written it.
	KindPinned  Kind = "pinned"
	KindManaged Kind = "managed" // <SystemDir>/requirements.yaml: ceilings
	KindFile    Kind = "file"    // a session config file: --config, DSH_FS_CONFIG, $XDG_CONFIG_HOME
	KindEnv     Kind = "env"     // a DSH_FS_* variable
	KindFlag    Kind = "flag"    // a command-line flag
)

// The trust of a source.
const (
	TrustTrusted = "trusted"
	TrustManaged = "managed"
	TrustSession = "session"
)

// Trust says how far a source is believed: "trusted" sources set the
// policy, "managed" ones cap it, and "session" sources — everything the
// model writes: flags, variables, files it names — may only narrow it.
func (k Kind) Trust() string {
	switch k {
	case KindDefault, KindSystem, KindUser, KindCommandLine, KindExecConfig, KindPinned:
		return TrustTrusted
	case KindManaged:
		return TrustManaged
	}
	return TrustSession
}

// Origin says where a setting's value came from.
type Origin struct {
	Source Kind `json:"origin"`
	// Name is the flag ("--mode"), the variable ("DSH_FS_MODE") or the
	// config file's path; empty for a default.
	Name  string `json:"from,omitempty"`
	Trust string `json:"trust"`
}

func origin(k Kind, name string) Origin { return Origin{Source: k, Name: name, Trust: k.Trust()} }

// describe names the source of one value as a denial's "matched" does:
// "--mode danger-full-access", "DSH_FS_MODE=danger-full-access",
// "file /tmp/p.yaml: approval".
func (o Origin) describe(k Key, raw string) string {
	switch o.Source {
	case KindFlag, KindCommandLine:
		if raw == "true" {
			return o.Name
		}
		return o.Name + " " + raw
	case KindEnv:
		return o.Name + "=" + raw
	case KindDefault:
		return "default " + string(k)
	}
	return "file " + o.Name + ": " + string(k)
}

// systemDir holds the system config file and the managed requirements.
// It is fixed at build time, never by a flag or a variable; a packager
// moves it with
//
//	go build -ldflags "-X github.com/dshfs/dsh-fs/internal/config.systemDir=/usr/local/etc/dsh-fs"
var systemDir = "/etc/dsh-fs"

// Locations are where the trusted files are: the release build's are
// DefaultLocations; only a test binary builds others.
type Locations struct {
	// SystemDir holds config.yaml and requirements.yaml.
	SystemDir string
	// Home returns the user's home folder from the user database, never
	// from $HOME, which a call can set.
	Home func() (string, error)
	// UserDir, where set, returns the folder of the user's config in
	// place of ~/.config/dsh-fs: on Windows the roaming AppData folder's
	// dsh-fs, from the shell's known folders, never from %APPDATA%.
	UserDir func() (string, error)
}

func userDatabaseHome() (string, error) {
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	if u.HomeDir == "" {
		return "", errors.New("the user database names no home folder")
	}
	return u.HomeDir, nil
}

// SystemFile, RequirementsFile and UserFile are the trusted config paths.
func (l Locations) SystemFile() string       { return filepath.Join(l.SystemDir, "config.yaml") }
func (l Locations) RequirementsFile() string { return filepath.Join(l.SystemDir, "requirements.yaml") }

// UserFile is "" when the user database names no home.
func (l Locations) UserFile(home string) string {
	if l.UserDir != nil {
		dir, err := l.UserDir()
		if err != nil || !filepath.IsAbs(dir) {
			return ""
		}
		return filepath.Join(dir, "config.yaml")
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "dsh-fs", "config.yaml")
}

// maxConfigBytes bounds a config file: a session could name /dev/zero or a
// huge log.
const maxConfigBytes = 1 << 20

// openConfig opens a config file for reading without following it into
// something that is not a regular file, and returns it with the real path
// of what was opened: decisions about the file (is it a secret?) are made
// on what was opened, never on the name before opening.
func openConfig(path string) (*os.File, string, error) {
	f, err := os.OpenFile(path, openConfigFlags, 0)
	if err != nil {
		return nil, "", err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file")
	}
	if err != nil {
		f.Close()
		return nil, "", err
	}
	real, err := openedPath(f)
	if err != nil {
		real = path
	}
	return f, real, nil
}

// parseConfig reads an opened config file. Its errors never quote the
// file's content: a session may name a secret as its config file.
func parseConfig(f *os.File, path string) (map[string]any, error) {
	data, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, fserr.Wrap(fserr.ConfigInvalid, "config "+path+": "+err.Error(), err)
	}
	if len(data) > maxConfigBytes {
		return nil, fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: larger than %d bytes", path, maxConfigBytes))
	}
	typ := strings.TrimPrefix(filepath.Ext(path), ".")
	switch typ {
	case "yaml", "yml", "json", "toml":
	default:
		typ = "yaml"
	}
	keys, err := decodeConfig(data, typ)
	var twice twiceError
	if errors.As(err, &twice) {
		return nil, fserr.New(fserr.ConfigInvalid, "config "+path+": "+twice.Error())
	}
	if err != nil {
		return nil, fserr.New(fserr.ConfigInvalid, "config "+path+": malformed "+strings.ToUpper(typ)+whereMalformed(data, err))
	}
	return keys, nil
}

// shownKey quotes a key of a config file in a message when it looks like
// a setting's name, and only says "a key" otherwise: a secrets file read
// as YAML has keys that are themselves secrets.
func shownKey(k string) string {
	if len(k) <= 40 && strings.Trim(k, "abcdefghijklmnopqrstuvwxyz0123456789_.-") == "" {
		return strconv.Quote(k)
	}
	return "(not shown)"
}

// readTrusted reads a trusted file when it exists, and refuses it when
// others could have written it (checkTrusted). Only the keys of allowed
// (every setting when nil) may appear.
func readTrusted(kind Kind, path string, allowed []Key) (*layer, error) {
	f, real, err := openConfig(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fserr.Wrap(fserr.ConfigInvalid, fmt.Sprintf("config %s: %v", path, err), err)
	}
	defer f.Close()
	if err := checkTrusted(path, real, f); err != nil {
		return nil, err
	}
	return fileLayer(kind, path, f, allowed)
}

// fileLayer parses a config file into a layer, checking each key's name
// and type.
func fileLayer(kind Kind, path string, f *os.File, allowed []Key) (*layer, error) {
	keys, err := parseConfig(f, path)
	if err != nil {
		return nil, err
	}
	l := &layer{kind: kind, name: path, values: map[Key]sourced{}}
	for k, raw := range keys {
		s, ok := lookupSetting(Key(k))
		if ok && allowed != nil && !containsKey(allowed, s.key) {
			return nil, fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key %s cannot be set here (a requirements file sets only %s)", path, k, keyList(allowed)))
		}
		if !ok {
			return nil, fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: unknown key %s", path, shownKey(k)))
		}
		x, err := fileValue(s, raw)
		if err == nil {
			if err = validate(s.key, x); err != nil {
				err = withoutValue(err)
			}
		}
		if err != nil {
			return nil, fserr.New(fserr.ConfigInvalid, fmt.Sprintf("config %s: key %s: %v", path, s.key, err))
		}
		l.values[s.key] = sourced{value: x, origin: origin(kind, path), raw: string(s.key)}
	}
	return l, nil
}

var wantPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\(want [^)]*\)`) })

// withoutValue rewords a validation error without the value it quotes:
// what a file holds stays out of messages, and only what was wanted is
// said.
func withoutValue(err error) error {
	if strings.HasPrefix(err.Error(), "malformed glob") {
		return errors.New("a malformed glob (an unclosed [ or a trailing \\)")
	}
	if want := wantPart().FindString(err.Error()); want != "" {
		return errors.New("not a valid value " + want)
	}
	return errors.New("not a valid value")
}

func containsKey(keys []Key, k Key) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

func keyList(keys []Key) string {
	s := make([]string, len(keys))
	for i, k := range keys {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
