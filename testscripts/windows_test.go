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
// names $WORK as Windows spells it: `C:\\users\\…\\ws\\a.txt` in JSON,
// `C:\users\…\ws\a.txt` in text, where a script expects '$WORK'/ws/a.txt.
// The scripts are run from copies in which each stdout or stderr pattern
// naming '$WORK' names '${WORKJ@R}' ($WORK with its backslashes escaped as
// JSON escapes them) or '${WORK@R}' instead, its path's slashes matching
// a backslash, JSON-escaped or not, or a slash; and a file a script
// compares with cmpenv names $WORK/a/b as the result does (${WORKJ}\\a\\b
// in a JSON object, $WORK\a\b in text). Nothing else of a script changes;
// a script that does not apply on Windows says so at its top
// ([windows] skip 'why').

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

// cmpenvFile is a cmpenv line and the file it compares with.
var cmpenvFile = regexp.MustCompile(`^\s*(?:\[[^]]*\]\s*)*cmpenv\s+\S+\s+(\S+)\s*$`)

// workPath is $WORK in a file and the path that follows it.
var workPath = regexp.MustCompile(`\$WORK((?:/[A-Za-z0-9_.~+-]*)*)`)

// windowsScript is script b with its patterns naming $WORK rewritten
// and the files cmpenv compares with naming it as a result does
// (scriptsDir); its other files as they were.
func windowsScript(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	compared := map[string]bool{}
	file := ""
	for i, l := range lines {
		if name, ok := bytes.CutPrefix(bytes.TrimSpace(l), []byte("-- ")); ok && bytes.HasSuffix(name, []byte(" --")) {
			file = string(bytes.TrimSuffix(name, []byte(" --")))
			continue
		}
		if file != "" {
			if compared[file] {
				lines[i] = workPath.ReplaceAllFunc(l, func(m []byte) []byte {
					path := string(workPath.FindSubmatch(m)[1])
					if bytes.HasPrefix(l, []byte("{")) {
						return []byte("${WORKJ}" + strings.ReplaceAll(path, "/", `\\`))
					}
					return []byte("$WORK" + strings.ReplaceAll(path, "/", `\`))
				})
			}
			continue
		}
		if m := cmpenvFile.FindSubmatch(l); m != nil {
			compared[string(m[1])] = true
		}
		if assertion.Match(l) {
			lines[i] = workPattern.ReplaceAllFunc(l, func(m []byte) []byte {
				path := strings.ReplaceAll(string(workPattern.FindSubmatch(m)[1]), "/", `(?:\\\\|\\|/)`)
				return []byte(`(?:'${WORKJ@R}'|'${WORK@R}')` + path)
			})
		}
	}
	return bytes.Join(lines, nil)
}

// osSetup sets WORKJ, $WORK as JSON spells it.
func osSetup(env *testscript.Env) {
	env.Setenv("WORKJ", strings.ReplaceAll(env.WorkDir, `\`, `\\`))
}
