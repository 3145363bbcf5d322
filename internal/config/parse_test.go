package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// parseFile writes body to a file called name and parses it as a config
// file is parsed (the extension picks the format).
func parseFile(t *testing.T, name, body string) (map[string]any, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return parseConfig(f, name)
}

// TestParseConfig pins what a config file's bytes become: one flat map
// from lowercased keys (nested maps joined with ".") to the values as the
// format's parser gives them, lists kept as lists. The settings' checks
// (fileValue) read these values.
func TestParseConfig(t *testing.T) {
	for _, tc := range []struct {
		name, file, body string
		want             map[string]any
	}{
		{"every kind of setting", "a.yaml",
			"mode: read-only\ncwd: \"\"\ntmp: true\nallow_io_uring: false\napproval_timeout: 60\n" +
				"protected: [\".git/**\", \"b\"]\nwritable_roots: []\nnetwork: off\n",
			map[string]any{"mode": "read-only", "cwd": "", "tmp": true, "allow_io_uring": false, "approval_timeout": 60,
				"protected": []any{".git/**", "b"}, "writable_roots": []any{}, "network": "off"}},
		{"a block list", "a.yaml", "deny_read:\n  - \"~/.ssh\"\n  - x\n",
			map[string]any{"deny_read": []any{"~/.ssh", "x"}}},
		{"a key without a value", "a.yaml", "mode:\n", map[string]any{"mode": nil}},
		{"keys are lowercased", "a.yaml", "MODE: x\nDeny_Read: [A]\n", map[string]any{"mode": "x", "deny_read": []any{"A"}}},
		{"nested maps are joined with dots", "a.yaml", "Net:\n  Sub: 1\n  Deep:\n    K: [1, {A: 2}]\n",
			map[string]any{"net.sub": 1, "net.deep.k": []any{1, map[string]any{"a": 2}}}},
		{"a dotted key", "a.yaml", "a.B: 1\n", map[string]any{"a.b": 1}},
		{"a leaf beside a dotted key below it", "a.yaml", "a: 1\na.b: 2\n", map[string]any{"a": 1, "a.b": 2}},
		{"keys that are not strings", "a.yaml", "1: x\na: {2: y, true: z}\n", map[string]any{"1": "x", "a.2": "y", "a.true": "z"}},
		{"YAML's own types", "a.yaml", "a: 1.5\nb: 0x10\nc: !!binary aGk=\n", map[string]any{"a": 1.5, "b": 16, "c": "hi"}},
		{"anchors and merges", "a.yaml", "a: &x {b: 1}\nc: *x\n<<: {d: 1}\n", map[string]any{"a.b": 1, "c.b": 1, "d": 1}},
		{"an empty map is a value", "a.yaml", "network: {}\na: {b: {}}\n", map[string]any{"network": map[string]any{}, "a.b": map[string]any{}}},
		{"an empty TOML table is a value", "a.toml", "[network]\n", map[string]any{"network": map[string]any{}}},
		{"an empty file", "a.yaml", "", map[string]any{}},
		{"only comments", "a.yaml", "# nothing\n", map[string]any{}},
		{"no extension is YAML", "config", "mode: read-only\n", map[string]any{"mode": "read-only"}},
		{"an unknown extension is YAML", "a.conf", "mode: read-only\n", map[string]any{"mode": "read-only"}},
		{"yml", "a.yml", "mode: read-only\n", map[string]any{"mode": "read-only"}},
		{"JSON", "a.json", `{"Mode": "read-only", "tmp": false, "approval_timeout": 60, "deny_read": ["a"], "n": {"M": null}}`,
			map[string]any{"mode": "read-only", "tmp": false, "approval_timeout": 60.0, "deny_read": []any{"a"}, "n.m": nil}},
		{"TOML", "a.toml", "Mode = \"read-only\"\ntmp = false\napproval_timeout = 60\ndeny_read = [\"a\"]\nd = 1979-05-27\n[T]\nX = 1\n",
			map[string]any{"mode": "read-only", "tmp": false, "approval_timeout": int64(60), "deny_read": []any{"a"},
				"d": toml.LocalDate{Year: 1979, Month: 5, Day: 27}, "t.x": int64(1)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseFile(t, tc.file, tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// TestParseConfigExample: every setting of the user's example file
// (config/config.yaml) comes out under its own name.
func TestParseConfigExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(examplesDir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseFile(t, "config.yaml", string(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range settings {
		if _, ok := got[string(s.key)]; !ok {
			t.Errorf("%s is missing", s.key)
		}
	}
	if len(got) != len(settings) {
		t.Errorf("%d keys, want %d", len(got), len(settings))
	}
	if got["approval_timeout"] != 60 || got["tmp"] != true || got["mode"] != "workspace-write" || !reflect.DeepEqual(got["writable_roots"], []any{}) {
		t.Errorf("got %#v", got)
	}
}

// TestParseConfigMalformed: a malformed file's error says the format,
// the line (and column where the parser knows it) and the setting, and
// never quotes the file.
func TestParseConfigMalformed(t *testing.T) {
	const secret = "hunter2"
	for _, tc := range []struct{ name, file, body, want string }{
		{"an unclosed list", "c.yaml", "mode: read-only\ndeny_read: [\"~/.ssh\", \"" + secret + "\"\n",
			"config c.yaml: malformed YAML at line 2, in \"deny_read\": did not find expected … or …"},
		{"a mapping in a mapping", "c.yaml", "mode: read-only\ndeny_read:\n  " + secret + ": x: y\n",
			"config c.yaml: malformed YAML at line 3, in \"deny_read\": mapping values are not allowed in this context"},
		{"a list", "c.yaml", "- " + secret + "\n",
			"config c.yaml: malformed YAML at line 1, in \"-\": not a map of settings (key: value lines)"},
		{"a scalar", "c.yaml", secret + "\n",
			"config c.yaml: malformed YAML at line 1: not a map of settings (key: value lines)"},
		{"a tab", "c.yaml", "mode: a\n\tdeny_read: [" + secret + "]\n",
			"config c.yaml: malformed YAML at line 2, in \"mode\": found a tab character that violates indentation"},
		{"a key twice", "c.yaml", "mode: a\nmode: " + secret + "\n",
			"config c.yaml: malformed YAML at line 2, in \"mode\": mapping key … already defined at line 1"},
		{"JSON", "c.json", "{\n  \"mode\": \"read-only\",\n  \"tmp\": " + secret + "\n}\n",
			"config c.json: malformed JSON at line 3, column 10, in \"tmp\": invalid character … looking for beginning of value"},
		{"a JSON list", "c.json", "[\"" + secret + "\"]", "config c.json: malformed JSON"},
		{"TOML", "c.toml", "mode = \"read-only\"\ndeny_read = [\"a\", " + secret + "]\n",
			"config c.toml: malformed TOML at line 2, column 19, in \"deny_read\": toml: incomplete number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFile(t, tc.file, tc.body)
			if fserr.CodeOf(err) != fserr.ConfigInvalid {
				t.Fatalf("err = %v, want %s", err, fserr.ConfigInvalid)
			}
			if err.Error() != tc.want {
				t.Errorf("err = %q\nwant  %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("err = %v quotes the file", err)
			}
		})
	}
}

// TestParseConfigTwice: a key given twice once case and nesting are set
// aside is refused, naming the key only when it looks like a setting.
func TestParseConfigTwice(t *testing.T) {
	for _, tc := range []struct{ name, file, body, key string }{
		{"by case", "c.yaml", "Mode: a\nmode: b\n", `"mode"`},
		{"by case in JSON", "c.json", `{"Mode": "a", "mode": "b"}`, `"mode"`},
		{"a dotted key and a nested one", "c.yaml", "a: {b: 1}\na.b: 2\n", `"a.b"`},
		{"a dotted map and a nested one", "c.yaml", "a:\n  b: {c: 1}\na.b:\n  c: 2\n", `"a.b.c"`},
		{"in TOML", "c.toml", "\"a.b\" = 1\n[a]\nb = 2\n", `"a.b"`},
		{"a key that is not shown", "c.yaml", "hunter2/X: 1\nHUNTER2/x: 2\n", "(not shown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFile(t, tc.file, tc.body)
			want := "config " + tc.file + ": key " + tc.key + " given twice (keys ignore case, and \"a.b\" is \"b\" under \"a\")"
			if fserr.CodeOf(err) != fserr.ConfigInvalid || err.Error() != want {
				t.Errorf("err = %v, want %s %q", err, fserr.ConfigInvalid, want)
			}
		})
	}
}

// FuzzParseConfigQuotesNothing: whatever a config file holds, reading it
// fails, if at all, with FS_CONFIG_INVALID, and the message quotes none of
// the file's values (a session may name a secret as its config file).
// The secret is mixed case, so shownKey never shows it as a key either.
func FuzzParseConfigQuotesNothing(f *testing.F) {
	const secret = "Zq9Xv7Wp"
	for _, seed := range []string{
		"mode: " + secret + "\n",
		"deny_read: [\"" + secret + "\"\n",
		"a:\n  " + secret + ": x: y\n",
		"{\"mode\": " + secret + "}",
		"{\"mode\": \"" + secret + "\"",
		"mode = " + secret + "\n",
		"deny_read = [\"a\", " + secret + "]\n",
		"[" + secret + "\n",
		secret + "\n",
		"- " + secret + "\n",
		"mode: '" + secret + "\n",
		"mode: \"\\" + secret + "\"\n",
	} {
		for _, ext := range []string{"yaml", "json", "toml"} {
			f.Add(seed, ext)
		}
	}
	f.Fuzz(func(t *testing.T, body, ext string) {
		if !strings.Contains(body, secret) {
			return
		}
		switch ext {
		case "yaml", "json", "toml":
		default:
			return
		}
		_, err := parseFile(t, "c."+ext, body)
		if err == nil {
			return
		}
		if fserr.CodeOf(err) != fserr.ConfigInvalid {
			t.Fatalf("err = %v, want %s", err, fserr.ConfigInvalid)
		}
		if strings.Contains(strings.ToLower(err.Error()), strings.ToLower(secret)) {
			t.Fatalf("err = %q quotes the file", err)
		}
	})
}
