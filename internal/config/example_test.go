package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestExampleConfigIsTheDefaults pins config/example.yaml to the code: it
// loads, names every setting, and every value in it is the default, so the
// documented defaults cannot drift from the real ones.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	// It is the example of a trusted file: a session file may not set
	// the trusted-only keys, whatever their value.
	raw, err := os.ReadFile("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	system := t.TempDir()
	if err := os.WriteFile(filepath.Join(system, "config.yaml"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	noHome := func() (string, error) { return "", errors.New("no home in this test") }
	fromFile, err := Load(Source{LookupEnv: lookup(nil), Locations: Locations{SystemDir: system, Home: noHome}})
	if err != nil {
		t.Fatalf("example.yaml does not load: %v", err)
	}
	defaults, err := Load(Source{LookupEnv: lookup(nil), Locations: Locations{SystemDir: t.TempDir(), Home: noHome}})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range fromFile.Values {
		if !strings.Contains(string(raw), "\n"+string(v.Key)+":") {
			t.Errorf("example.yaml does not set %s", v.Key)
		}
		if v.Source != KindSystem {
			t.Errorf("%s: origin %q, want system", v.Key, v.Source)
		}
		if want := defaults.Values[i].Value; !reflect.DeepEqual(v.Value, want) {
			t.Errorf("%s: example.yaml says %v, the default is %v", v.Key, v.Value, want)
		}
	}
}

func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}
