//go:build windows

package testscripts

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// On Windows (run under Wine on this project's Linux machines) a result
// names $WORK as Windows spells it, in JSON: `C:\\users\\…\\ws\\a.txt`
// where a script expects '$WORK'/ws/a.txt. The scripts are run from
// copies in which each stdout or stderr pattern naming '$WORK' names
// '${WORKJ@R}' instead ($WORK with its backslashes escaped as JSON escapes
// them), its path's slashes matching a backslash, JSON-escaped or not,
// or a slash. Nothing else of a script changes; a script that does not
// apply on Windows says so at its top ([windows] skip 'why').

// workPattern is '$WORK' in a pattern, with the path that follows it.
var workPattern = regexp.MustCompile(`'\$WORK'((?:/[A-Za-z0-9_.~*+?()\[\]{}-]*)*)`)

// assertion is a script line whose argument is a pattern on an output.
var assertion = regexp.MustCompile(`^\s*(?:\[[^]]*\]\s*)*!?\s*(?:stdout|stderr)\b`)

// scriptsDir is the folder of copies of the scripts, rewritten for
// Windows (above).
func scriptsDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "testscripts")
	if err != nil {
		t.Fatal(err)
	}
	names, err := filepath.Glob("*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), windowsScript(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// windowsScript is script b with its patterns naming $WORK rewritten
// (scriptsDir); its files, after the first "-- name --", as they were.
func windowsScript(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		if bytes.HasPrefix(l, []byte("-- ")) {
			break
		}
		if assertion.Match(l) {
			lines[i] = workPattern.ReplaceAllFunc(l, func(m []byte) []byte {
				path := strings.ReplaceAll(string(workPattern.FindSubmatch(m)[1]), "/", `(?:\\\\|\\|/)`)
				return []byte(`'${WORKJ@R}'` + path)
			})
		}
	}
	return bytes.Join(lines, nil)
}

// osSetup sets WORKJ, $WORK as JSON spells it.
func osSetup(env *testscript.Env) {
	env.Setenv("WORKJ", strings.ReplaceAll(env.WorkDir, `\`, `\\`))
}
