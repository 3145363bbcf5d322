package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestExampleConfigIsTheDefaults pins config/example.yaml to the code: it
// loads, names every setting, and every value in it is the default, so the
// documented defaults cannot drift from the real ones.
func TestExampleConfigIsTheDefaults(t *testing.T) {
	env := map[string]string{EnvConfig: "example.yaml"}
	fromFile, err := Load(Source{LookupEnv: lookup(env)})
	if err != nil {
		t.Fatalf("example.yaml does not load: %v", err)
	}
	defaults, err := Load(Source{LookupEnv: lookup(map[string]string{"XDG_CONFIG_HOME": t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range fromFile.Values {
		if !strings.Contains(string(raw), "\n"+string(v.Key)+":") {
			t.Errorf("example.yaml does not set %s", v.Key)
		}
		if v.Source != "file" {
			t.Errorf("%s: origin %q, want file", v.Key, v.Source)
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
