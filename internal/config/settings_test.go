package config

import (
	"strings"
	"testing"
)

// TestEnvironmentDocumented: every variable a call reads is listed by
// Environment, documented, and named like its setting, so the help and
// the man pages cannot leave one out.
func TestEnvironmentDocumented(t *testing.T) {
	listed := map[string]string{}
	for _, v := range Environment() {
		if !strings.HasPrefix(v.Name, "DSH_FS_") || v.Doc == "" {
			t.Errorf("%+v: want a DSH_FS_ name and a doc", v)
		}
		listed[v.Name] = v.Doc
	}
	if _, ok := listed[EnvConfig]; !ok {
		t.Errorf("%s is not listed", EnvConfig)
	}
	for _, s := range settings {
		if s.env == "" {
			continue
		}
		if _, ok := listed[s.env]; !ok {
			t.Errorf("%s (key %s) is not listed", s.env, s.key)
		}
		if envDocs()[s.key] == "" {
			t.Errorf("%s has no doc in envDocs", s.env)
		}
		if want := "DSH_FS_" + strings.ToUpper(string(s.key)); s.env != want {
			t.Errorf("key %s has variable %s, want %s", s.key, s.env, want)
		}
	}
	if got := len(Environment()); got != len(listed) {
		t.Errorf("Environment lists %d variables, %d distinct", got, len(listed))
	}
}

func TestFiles(t *testing.T) {
	files := Locations{SystemDir: "/etc/dsh-fs"}.Files()
	var paths []string
	for _, f := range files {
		paths = append(paths, f.Path)
	}
	want := "/etc/dsh-fs/config.yaml ~/.config/dsh-fs/config.yaml /etc/dsh-fs/requirements.yaml $XDG_CONFIG_HOME/dsh-fs/config.yaml"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("Files() = %s, want %s", got, want)
	}
}
