package config

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"testing"

	"github.com/spf13/pflag"
)

// examplesDir holds the example configs a user copies (the top level's
// config/, README.md).
const examplesDir = "../../config"

// example is one file of config/ and the place it is meant for.
type example struct {
	file string
	kind Kind
	// every lists the keys the file must name, set or commented:
	// settings for the user's file (all of them), managedKeys for the
	// requirements; nil for a file that names a chosen few.
	every []Key
}

func examples() []example {
	all := make([]Key, len(settings))
	for i, s := range settings {
		all[i] = s.key
	}
	return []example{
		{"config.yaml", KindUser, all},
		{"exec-config.yaml", KindExecConfig, nil},
		{"requirements.yaml", KindManaged, managedKeys},
	}
}

// TestExampleConfigs pins each example config of config/ to the code:
// put where it is meant to go (the user's file under the home folder,
// the file of a trusted `dsh-fs exec --config`, the managed
// requirements in the system folder), the real loader takes it, and
// every effective value is the default, both as shipped and with every
// commented key ("# key: value") uncommented. So an example the loader
// would refuse (an unknown key, a key its place may not set, a relative
// path) fails here, and so does one whose documented defaults drifted
// from the real ones.
func TestExampleConfigs(t *testing.T) {
	defaults := loadIn(t, "", KindDefault, nil)
	for _, ex := range examples() {
		t.Run(ex.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(examplesDir, ex.file))
			if err != nil {
				t.Fatal(err)
			}
			named := map[string]bool{}
			for _, phase := range []struct {
				name string
				body []byte
			}{{"as shipped", raw}, {"uncommented", uncomment(raw)}} {
				keys, err := decodeConfig(phase.body, "yaml")
				if err != nil {
					t.Fatalf("%s: %v", phase.name, err)
				}
				s := loadIn(t, string(phase.body), ex.kind, nil)
				for i, v := range s.Values {
					if want := defaults.Values[i].Value; !reflect.DeepEqual(v.Value, want) {
						t.Errorf("%s: %s is %v, the default is %v", phase.name, v.Key, v.Value, want)
					}
					if _, set := keys[string(v.Key)]; set && ex.kind != KindManaged && v.Source != ex.kind {
						t.Errorf("%s: %s: origin %q, want %q", phase.name, v.Key, v.Source, ex.kind)
					}
				}
				for k := range keys {
					named[k] = true
				}
			}
			for _, k := range ex.every {
				if !named[string(k)] {
					t.Errorf("%s does not name %s", ex.file, k)
				}
			}
		})
	}
}

// TestExampleConfigsCatchDrift: the check above fails on an example
// whose value is not the default, and on one its place refuses, so it
// cannot pass by loading nothing.
func TestExampleConfigsCatchDrift(t *testing.T) {
	defaults := loadIn(t, "", KindDefault, nil)
	s := loadIn(t, "# diff_context: 7\n", KindUser, nil)
	s2 := loadIn(t, string(uncomment([]byte("# diff_context: 7\n"))), KindUser, nil)
	if !reflect.DeepEqual(s.Values, defaults.Values) || reflect.DeepEqual(s2.Values, defaults.Values) {
		t.Error("a commented key is not read, or an uncommented one is")
	}
	var err error
	loadIn(t, "output: json\n", KindManaged, &err)
	if err == nil {
		t.Error("requirements that set output loaded")
	}
	loadIn(t, "writable_roots: [relative]\n", KindExecConfig, &err)
	if err == nil {
		t.Error("an exec --config file with a relative root loaded")
	}
}

// commentedKey is a commented setting of an example: "# key: value".
var commentedKey = regexp.MustCompile(`(?m)^# ([a-z_]+): `)

// uncomment turns every commented setting of raw into a set one; a
// comment that only reads like one ("# allowlist: …") stays.
func uncomment(raw []byte) []byte {
	return commentedKey.ReplaceAllFunc(raw, func(m []byte) []byte {
		key := commentedKey.FindSubmatch(m)[1]
		if slices.ContainsFunc(settings, func(s setting) bool { return string(s.key) == string(key) }) {
			return m[2:]
		}
		return m
	})
}

// loadIn runs Load with body as the file of kind in its place, in a fresh
// system folder and home (KindDefault: no file at all). With errp nil a
// failure is fatal; otherwise it is stored there.
func loadIn(t *testing.T, body string, kind Kind, errp *error) *Settings {
	t.Helper()
	system, home := t.TempDir(), t.TempDir()
	loc := Locations{SystemDir: system, Home: func() (string, error) { return home, nil }}
	src := Source{LookupEnv: lookup(nil), Locations: loc}
	var path string
	switch kind {
	case KindUser:
		path = loc.UserFile(home)
	case KindManaged:
		path = loc.RequirementsFile()
	case KindExecConfig:
		path = filepath.Join(t.TempDir(), "session-1.yaml")
		fs := pflag.NewFlagSet("exec", pflag.ContinueOnError)
		fs.String(FlagConfig, "", "")
		if err := fs.Set(FlagConfig, path); err != nil {
			t.Fatal(err)
		}
		src.Flags, src.FlagsTrusted, src.ConfigTrusted = fs, true, true
	}
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(src)
	if errp != nil {
		*errp = err
		return s
	}
	if err != nil {
		t.Fatalf("%s does not load as %s: %v", path, kind, err)
	}
	if kind != KindDefault && !slices.ContainsFunc(s.Files, func(f File) bool { return f.Path == path && f.Source == kind }) {
		t.Fatalf("%s was not loaded as %s: %v", path, kind, s.Files)
	}
	return s
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}
