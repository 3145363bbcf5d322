package seatbelt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// TestLint: Lint refuses each mistake that makes Seatbelt refuse a
// profile or match nothing, and passes the generator's own.
func TestLint(t *testing.T) {
	good := "(version 1)\n(deny default)\n(allow file-write* (subpath (param \"W_0\")))\n"
	params := []Param{{"W_0", "/private/tmp/ws"}}
	if err := Lint(&Profile{Text: good, Params: params}); err != nil {
		t.Fatalf("a good profile: %v", err)
	}
	for _, tc := range []struct {
		name   string
		text   string
		params []Param
		want   string
	}{
		{"allow default", good + "(allow default)\n", params, "allows by default"},
		{"allow default spaced", good + "(allow\n  default)\n", params, "allows by default"},
		{"no deny default", "(version 1)\n(allow file-read*)\n", nil, "deny default"},
		{"lexical /tmp in the text", good + "(allow file-write* (subpath \"/tmp/x\"))\n", params, "symlink"},
		{"lexical /var in the text", good + "(allow file-write* (literal \"/var\"))\n", params, "symlink"},
		{"lexical /etc in a regex", good + "(allow file-write* (regex #\"^/etc/x\"))\n", params, "symlink"},
		{"lexical /tmp in a parameter", good, []Param{{"W_0", "/tmp/ws"}}, "symlink"},
		{"lexical /etc in a parameter", good, []Param{{"W_0", "/etc"}}, "symlink"},
		{"long string", good + "(allow file-write* (literal \"/" + strings.Repeat("a", MaxString) + "\"))\n", params, "over"},
		{"long parameter", good, []Param{{"W_0", "/" + strings.Repeat("a", MaxString)}}, "over"},
		{"parameter not read", good, append(params, Param{"X_0", "/private/x"}), "not read"},
		{"parameter not given", good, nil, "not given"},
		{"parameter twice", good, append(params, params[0]), "twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Lint(&Profile{Text: tc.text, Params: tc.params})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Lint = %v, want an error with %q", err, tc.want)
			}
		})
	}
	for _, ok := range []string{"/private/tmp/x", "/private/var/folders/x", "/Users/a/tmp", "/private/etc", "/tmpfoo", "/x/var"} {
		if err := Lint(&Profile{Text: good, Params: []Param{{"W_0", ok}}}); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestSymlinkSpelledResolved: a writable root spelled through a real
// symlink (as /tmp/x is /private/tmp/x on macOS) is passed as the
// folder the link leads to, and a protected path not made yet beneath
// it too; the link's own spelling is in no parameter.
func TestSymlinkSpelledResolved(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real, link := filepath.Join(dir, "private", "ws"), filepath.Join(dir, "ws")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	p := &plan.Plan{RestrictWrites: true, Writable: []string{link},
		Files: &plan.Files{ReadOnly: []string{filepath.Join(link, ".git")}}}
	prof, err := Build(p, ResolveAsMac)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"WRITABLE_ROOT_0": macSpelling(real), "READ_ONLY_0": macSpelling(filepath.Join(real, ".git"))}
	for _, pa := range prof.Params {
		if strings.HasPrefix(pa.Value+"/", macSpelling(link)+"/") {
			t.Errorf("parameter %s=%s is spelled through the link", pa.Name, pa.Value)
		}
		if w, ok := want[pa.Name]; ok {
			if pa.Value != w {
				t.Errorf("%s=%s, want %s", pa.Name, pa.Value, w)
			}
			delete(want, pa.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("parameters missing: %v", want)
	}
}
