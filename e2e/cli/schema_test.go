package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/pflag"

	"github.com/dshfs/dsh-fs/docs"
	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/cli"
)

// TestSchemasAreValid compiles every schema (which checks it against the
// draft 2020-12 meta-schema and resolves every $ref), and checks that each
// input schema has one property per flag of its command, with the flag's
// type and default.
func TestSchemasAreValid(t *testing.T) {
	schemas := harness.Schemas(t)
	for _, want := range []string{"defs.json", "failure.json"} {
		if schemas[want] == nil {
			t.Errorf("missing %s", want)
		}
	}
	for _, op := range []string{"read", "write", "edit", "patch", "ls", "grep", "find", "stat", "policy", "version", "denials", "audit-verify", "mkdir", "move", "rm"} {
		if schemas["result-"+op+".json"] == nil {
			t.Errorf("missing result-%s.json", op)
		}
	}

	root := cli.NewCmdRoot(&cli.App{})
	for _, op := range []string{"read", "write", "edit", "patch", "ls", "grep", "find", "stat", "policy", "denials", "mkdir", "move", "rm"} {
		t.Run("input-"+op, func(t *testing.T) {
			data, err := docs.Schema.ReadFile("schema/input-" + op + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var in struct {
				Properties map[string]struct {
					Type        string `json:"type"`
					Enum        []any  `json:"enum"`
					Default     any    `json:"default"`
					Description string `json:"description"`
				} `json:"properties"`
				AdditionalProperties *bool `json:"additionalProperties"`
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.UseNumber() // defaults compare as the flags print them
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			if in.AdditionalProperties == nil || *in.AdditionalProperties {
				t.Errorf("additionalProperties is not false")
			}
			c, _, err := root.Find([]string{op})
			if err != nil || c.Name() != op {
				t.Fatalf("no command %s: %v", op, err)
			}
			for name, p := range in.Properties {
				if p.Description == "" {
					t.Errorf("%s: no description", name)
				}
				if name == "path" || name == "paths" || name == "pattern" || name == "source" || name == "destination" {
					continue // positional arguments
				}
				f := c.Flag(strings.ReplaceAll(name, "_", "-"))
				if f == nil {
					t.Errorf("%s: %s has no flag --%s", name, op, strings.ReplaceAll(name, "_", "-"))
					continue
				}
				wantType := map[string]string{"bool": "boolean", "int": "integer", "string": "string", "stringArray": "array"}[f.Value.Type()]
				if name == "edits" {
					wantType = "array" // --edits - reads the array on stdin
				}
				if name == "escalate" || op == "find" && name == "type" {
					wantType = "" // an enum
				}
				if p.Type != wantType {
					t.Errorf("%s: type %q, want %q (flag type %s)", name, p.Type, wantType, f.Value.Type())
				}
				if p.Default != nil && fmt.Sprint(p.Default) != f.DefValue {
					t.Errorf("%s: default %v, flag's default %s", name, p.Default, f.DefValue)
				}
			}
			// Every flag of the command itself is there; the policy-source
			// flags every command shares are the harness's, not the
			// model's, except --escalate on a mutation. A hidden flag is a
			// shell habit accepted as a no-op (grep -n), not an input.
			c.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
				if f.Name == "help" || f.Hidden {
					return
				}
				if _, ok := in.Properties[strings.ReplaceAll(f.Name, "-", "_")]; !ok {
					t.Errorf("flag --%s has no property", f.Name)
				}
			})
			_, hasEscalate := in.Properties["escalate"]
			if mutation := slices.Contains([]string{"write", "edit", "patch", "mkdir", "move", "rm"}, op); hasEscalate != mutation {
				t.Errorf("escalate property: %v, want %v", hasEscalate, mutation)
			}
		})
	}
}

// schemaCase is one real call of dsh-fs and the schema its stdout must
// match.
type schemaCase struct {
	name   string
	args   []string
	stdin  string
	env    []string // extra KEY=VALUE
	schema string   // file in docs/schema
	exit   int
	// want are substrings of stdout that prove the case shows what its
	// name says (a window, a cut line, an omitted diff…).
	want []string
}

// TestResultsMatchSchema runs the real command for every result shape and
// validates its one line of stdout against the documented schema.
func TestResultsMatchSchema(t *testing.T) {
	schemas := harness.Schemas(t)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	cfg := filepath.Join(dir, "cfg")
	files := map[string]string{
		"ws/a.txt":             "one\ntwo\nthree\nfour\n",
		"ws/long.txt":          "a line longer than the byte budget\nshort\n",
		"ws/over.txt":          "old\n",
		"ws/trunc.txt":         "old\n",
		"ws/big.txt":           "more than one byte\n",
		"ws/big2.txt":          "more than one byte\n",
		"ws/hl.txt":            "linked\n",
		"ws/e1.txt":            "alpha\nbeta\n",
		"ws/e2.txt":            "x y x\n",
		"ws/e3.txt":            "first\nsecond\n",
		"ws/e4.txt":            "a\n",
		"ws/amb.txt":           "dup\nmid\ndup\n",
		"ws/e5.txt":            "one\ntwo\n",
		"ws/m/f1.go":           "oldName()\n",
		"ws/m/f2.go":           "oldName()\noldName()\n",
		"ws/m/f3.go":           "none\n",
		"ws/n/g1.txt":          "x\n",
		"ws/n/g2.txt":          "x x\n",
		"ws/nm.txt":            "func f() {\n\treturn 1\n}\n",
		"ws/p1.txt":            "one\ntwo\n",
		"ws/p2.txt":            "gone\n",
		"ws/p3.txt":            "moved\n",
		"ws/stale.txt":         "v1\n",
		"ws/mv1.txt":           "m\n",
		"ws/rm1.txt":           "r\n",
		"ws/rm2.txt":           "r\n",
		"ws/exists.txt":        "old\n",
		"ws/bin.dat":           "\x00\x01\x02",
		"ws/bin2.dat":          "\x00\x01\x02",
		"ws/cp1252.txt":        "caf\xe9\r\n",
		"ws/utf16.txt":         "\xff\xfea\x00\n\x00",
		"ws/.env":              "SECRET=1\n",
		"ws/tree/b.txt":        "b\n",
		"ws/tree/sub/c.txt":    "c\n",
		"ws/tree/.hidden":      "h\n",
		"outside/o.txt":        "outside\n",
		"cfg/bad.yaml":         "mode: bogus\n",
		"cfg/narrow.yaml":      "deny_read: [\"**/.env\"]\n",
		"trust/config.yaml":    "deny_read: [\"**/.env\"]\napproval: trust\n",
		"never/config.yaml":    "max_mode: workspace-write\napproval: never\n",
		"home/.keep":           "",
		"xdg/dsh-fs/.keep":     "",
		"ws/tree/sub/deep.md":  "deep\n",
		"ws/tree/sub/long.txt": strings.Repeat("x", 600) + "deep" + strings.Repeat("y", 600) + "\n",
		"ws/tree/.gitignore":   "*.log\n",
		"ws/tree/sub/out.log":  "deep\n",
		"ws/audit-empty.jsonl": "",
		"ws/audit-bad.jsonl":   "x\n",
	}
	harness.WriteTree(t, dir, files)
	if err := os.Symlink("b.txt", filepath.Join(ws, "tree", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(ws, "alink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("a.txt", filepath.Join(ws, "mvlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(ws, "hl.txt"), filepath.Join(ws, "hl-other.txt")); err != nil {
		t.Fatal(err)
	}
	// The approval and max_mode settings are trusted-only: they come from
	// the system file, which the test binary's dsh-fs finds here.
	trust := "DSH_FS_TEST_SYSTEM_DIR=" + filepath.Join(dir, "trust")
	never := "DSH_FS_TEST_SYSTEM_DIR=" + filepath.Join(dir, "never")
	narrow := "DSH_FS_CONFIG=" + filepath.Join(cfg, "narrow.yaml")
	staleSum := strings.Repeat("0", 64)

	cases := []schemaCase{
		// read
		{name: "read", args: []string{"read", "a.txt"}, schema: "result-read.json", want: []string{`"total_lines":4`}},
		{name: "read window", args: []string{"read", "a.txt", "--offset", "2", "--limit", "2"}, schema: "result-read.json", want: []string{`"next_offset":4`}},
		{name: "read cut line", args: []string{"read", "long.txt"}, env: []string{"DSH_FS_READ_MAX_BYTES=8"}, schema: "result-read.json", want: []string{`"cut_line":1`}},
		{name: "read past end", args: []string{"read", "a.txt", "--offset", "9"}, schema: "result-read.json", want: []string{`"content":""`, `"past_end":true`}},
		{name: "read windows-1252", args: []string{"read", "cp1252.txt"}, schema: "result-read.json", want: []string{`"encoding":"windows-1252"`}},
		{name: "read utf-16", args: []string{"read", "utf16.txt"}, schema: "result-read.json", want: []string{`"encoding":"utf-16le"`}},
		// write
		{name: "write create", args: []string{"write", "created.txt", "--content", "new\n"}, schema: "result-write.json", want: []string{`"created":true`, `"diff":{"added":1,"removed":0,"summary":true}`}},
		{name: "write create full diff", args: []string{"write", "created-full.txt", "--content", "new\n", "--diff", "full"}, schema: "result-write.json", want: []string{`"text":"--- /dev/null\n`}},
		{name: "write overwrite", args: []string{"write", "over.txt", "--overwrite", "--content", "new\n"}, schema: "result-write.json", want: []string{`"previous_sha256"`}},
		{name: "write stdin", args: []string{"write", "stdin.txt", "--mkdir", "--from", "-"}, stdin: "from stdin\n", schema: "result-write.json", want: []string{`"bytes":11`}},
		{name: "write dry run", args: []string{"write", "a.txt", "--overwrite", "--content", "x", "--dry-run"}, schema: "result-write.json", want: []string{`"dry_run":true`}},
		{name: "write omitted diff", args: []string{"write", "big.txt", "--overwrite", "--content", "y"}, env: []string{"DSH_FS_DIFF_BASIS_MAX_BYTES=1"}, schema: "result-write.json", want: []string{`"diff":{"omitted":"basis_too_large"}`}},
		{name: "write binary diff", args: []string{"write", "bin2.dat", "--overwrite", "--content", "text"}, schema: "result-write.json", want: []string{`"diff":{"omitted":"binary"}`}},
		{name: "write truncated diff", args: []string{"write", "trunc.txt", "--overwrite", "--content", strings.Repeat("line\n", 50)}, env: []string{"DSH_FS_DIFF_MAX_BYTES=40"}, schema: "result-write.json", want: []string{`"truncated":true}`}},
		{name: "write hardlink broken", args: []string{"write", "hl.txt", "--overwrite", "--content", "replaced\n"}, schema: "result-write.json", want: []string{`"hardlink_broken":true`}},
		{name: "write encoding", args: []string{"write", "enc.txt", "--content", "café\n", "--encoding", "utf-16be"}, schema: "result-write.json", want: []string{`"encoding":"utf-16be"`}},
		{name: "write large unread", args: []string{"write", "big2.txt", "--overwrite", "--content", "z"}, env: []string{"DSH_FS_DIFF_BASIS_MAX_BYTES=1"}, schema: "result-write.json", want: []string{`"sha256":"`, `"diff":{"omitted":"basis_too_large"}`}},
		{name: "write escalated", args: []string{"write", "../outside/esc.txt", "--content", "e", "--escalate", "danger-full-access"}, env: []string{trust}, schema: "result-write.json", want: []string{`"escalated":true`}},
		// edit
		{name: "edit", args: []string{"edit", "e1.txt", "--old", "beta", "--new", "BETA"}, schema: "result-edit.json", want: []string{`"replacements":1`}},
		{name: "edit replace all", args: []string{"edit", "e2.txt", "--old", "x", "--new", "z", "--replace-all"}, schema: "result-edit.json", want: []string{`"replacements":2`}},
		{name: "edit diff summary", args: []string{"edit", "e4.txt", "--old", "a", "--new", "b", "--diff", "summary"}, schema: "result-edit.json", want: []string{`"diff":{"added":1,"removed":1,"summary":true}`}},
		{name: "edit dry run", args: []string{"edit", "a.txt", "--old", "two", "--new", "TWO", "--dry-run"}, schema: "result-edit.json", want: []string{`"dry_run":true`}},
		{name: "edit warnings", args: []string{"edit", "e5.txt", "--old", "two", "--new-file", "-"}, stdin: "TWO\n", schema: "result-edit.json", want: []string{`"warnings":["new text ends in a line break`}},
		{name: "edit files", args: []string{"edit", "m/*.go", "--old", "oldName(", "--new", "newName(", "--replace-all"}, schema: "result-edit.json", want: []string{`"replacements":3,"files":[{"path":"m/f1.go"`, `"skipped":["m/f3.go"]`}},
		{name: "edit files dry run", args: []string{"edit", "n/g1.txt", "n/g2.txt", "--old", "x", "--new", "y", "--replace-all", "--dry-run", "--diff", "summary"}, schema: "result-edit.json", want: []string{`"dry_run":true`, `"path":"n/g2.txt"`}},
		{name: "edit pick out of range", args: []string{"edit", "amb.txt", "--old", "dup", "--new", "x", "--occurrence", "3"}, schema: "failure.json", exit: 1, want: []string{`"FS_EDIT_NO_MATCH"`, `"lines":[1,3]`}},
		{name: "edit edits stdin", args: []string{"edit", "e3.txt", "--edits", "-"}, stdin: `[{"old":"first","new":"1st"},{"old":"second","new":"2nd","replace_all":true}]`, schema: "result-edit.json", want: []string{`"replacements":2`}},
		// ls
		{name: "ls", args: []string{"ls", "tree"}, schema: "result-ls.json", want: []string{`"target":"b.txt"`}},
		{name: "ls recursive all", args: []string{"ls", "tree", "--recursive", "--all"}, schema: "result-ls.json", want: []string{`"name":"sub/c.txt"`, `".hidden"`}},
		{name: "ls truncated", args: []string{"ls", "tree", "--limit", "1"}, schema: "result-ls.json", want: []string{`"truncated":true`}},
		{name: "ls hidden by deny_read", args: []string{"ls", "--all"}, env: []string{trust}, schema: "result-ls.json", want: []string{`"hidden":1`}},
		// grep
		{name: "grep", args: []string{"grep", "deep", "tree"}, schema: "result-grep.json", want: []string{`"path":"tree/sub/deep.md","line":1,"column":1,"text":"deep"`, `"ignored":1`}},
		{name: "grep context", args: []string{"grep", "two", "a.txt", "--context", "1"}, schema: "result-grep.json", want: []string{`"before":["one"],"after":["three"]`}},
		{name: "grep cut line", args: []string{"grep", "deep", "tree/sub/long.txt"}, schema: "result-grep.json", want: []string{`"cut":true`}},
		{name: "grep files", args: []string{"grep", "deep", "tree", "--files"}, schema: "result-grep.json", want: []string{`"files":[{"path":"tree/sub/deep.md"}`}},
		{name: "grep count", args: []string{"grep", "e", "tree", "--count", "--no-ignore"}, schema: "result-grep.json", want: []string{`"count":1`}},
		{name: "grep truncated", args: []string{"grep", "deep", "tree", "--limit", "1"}, schema: "result-grep.json", want: []string{`"truncated":true,"left_out":1,"cursor":"`}},
		{name: "grep binary and hidden", args: []string{"grep", "SECRET"}, env: []string{trust}, schema: "result-grep.json", want: []string{`"binary":`, `"hidden":1`}},
		{name: "grep symlink", args: []string{"grep", "b", "tree"}, schema: "result-grep.json", want: []string{`"symlink":1`}},
		// find
		{name: "find", args: []string{"find", "*.txt", "tree"}, schema: "result-find.json", want: []string{`{"path":"tree/b.txt","type":"file","size":2}`}},
		{name: "find sort size", args: []string{"find", "*.txt", "tree", "--sort", "size", "--limit", "1"}, schema: "result-find.json", want: []string{`"truncated":true,"left_out":`}},
		{name: "find sort lines", args: []string{"find", "*", "tree", "--sort", "lines", "--no-ignore"}, schema: "result-find.json", want: []string{`"lines":1`, `"lines_skipped":"not_a_file"`}},
		{name: "find sort mtime", args: []string{"find", "*.md", "tree", "--sort", "mtime"}, schema: "result-find.json", want: []string{`"mtime":"`}},
		{name: "find symlink", args: []string{"find", "link", "tree"}, schema: "result-find.json", want: []string{`"type":"symlink"`}},
		{name: "find truncated", args: []string{"find", "**", "tree", "--limit", "1"}, schema: "result-find.json", want: []string{`"truncated":true,"left_out":`, `"cursor":"`}},
		{name: "find hidden", args: []string{"find", "*"}, env: []string{trust}, schema: "result-find.json", want: []string{`"hidden":1`}},
		{name: "find not a folder", args: []string{"find", "*", "a.txt"}, schema: "failure.json", exit: 1, want: []string{`"FS_NOT_DIR"`}},
		{name: "grep bad pattern", args: []string{"grep", "a("}, schema: "failure.json", exit: 2, want: []string{`"FS_INVALID_ARGUMENT"`}},
		// denials: outside a session no log, and the path explained
		{name: "denials", args: []string{"denials", "/etc/hosts", "a.txt"}, schema: "result-denials.json", want: []string{`"session":false`, `"entries":[]`, `"op":"write"`}},
		// stat
		{name: "stat file", args: []string{"stat", "a.txt"}, schema: "result-stat.json", want: []string{`"exists":true`}},
		{name: "stat dir", args: []string{"stat", "tree"}, schema: "result-stat.json", want: []string{`"type":"dir"`}},
		{name: "stat missing", args: []string{"stat", "nope.txt"}, schema: "result-stat.json", want: []string{`"exists":false`}},
		{name: "stat symlink", args: []string{"stat", "alink"}, schema: "result-stat.json", want: []string{`"type":"symlink"`, `"target":"a.txt"`}},
		{name: "stat not writable", args: []string{"stat", "../outside/o.txt"}, schema: "result-stat.json", want: []string{`"writable_reason":"outside writable roots"`}},
		{name: "stat read-only", args: []string{"stat", "a.txt", "--mode", "read-only"}, schema: "result-stat.json", want: []string{`"writable_reason":"read-only mode"`}},
		// mkdir, move, rm
		{name: "mkdir", args: []string{"mkdir", "mk"}, schema: "result-mkdir.json", want: []string{`"created":true}`}},
		{name: "mkdir there", args: []string{"mkdir", "tree"}, schema: "result-mkdir.json", want: []string{`"created":false}`}},
		{name: "mkdir dry run", args: []string{"mkdir", "mk2/a", "--parents", "--dry-run"}, schema: "result-mkdir.json", want: []string{`"created":true,"dry_run":true}`}},
		{name: "mkdir escalated", args: []string{"mkdir", "../outside/mk", "--escalate", "danger-full-access"}, env: []string{trust}, schema: "result-mkdir.json", want: []string{`"escalated":true`}},
		{name: "mkdir missing parent", args: []string{"mkdir", "no/such"}, schema: "failure.json", exit: 1, want: []string{`"FS_NOT_FOUND"`}},
		{name: "move", args: []string{"move", "mv1.txt", "tree/mv1.txt"}, schema: "result-move.json", want: []string{`"destination":"tree/mv1.txt","destination_resolved":"`, `"type":"file"}`}},
		{name: "move symlink", args: []string{"move", "mvlink", "mvlink2"}, schema: "result-move.json", want: []string{`"type":"symlink"}`}},
		{name: "move dry run", args: []string{"move", "a.txt", "a2.txt", "--dry-run"}, schema: "result-move.json", want: []string{`"dry_run":true}`}},
		{name: "move exists", args: []string{"move", "e4.txt", "a.txt"}, schema: "failure.json", exit: 1, want: []string{`"FS_EXISTS"`}},
		{name: "rm", args: []string{"rm", "rm1.txt"}, schema: "result-rm.json", want: []string{`"type":"file"}`}},
		{name: "rm dry run", args: []string{"rm", "rm2.txt", "--dry-run"}, schema: "result-rm.json", want: []string{`"type":"file","dry_run":true}`}},
		{name: "rm dry run not empty", args: []string{"rm", "tree", "--dry-run"}, schema: "failure.json", exit: 1, want: []string{`"FS_IS_DIR"`}},
		{name: "rm denied", args: []string{"rm", "../outside/o.txt"}, schema: "failure.json", exit: 3, want: []string{`"reason":"outside writable roots"`}},
		// policy, version
		{name: "policy", args: []string{"policy"}, schema: "result-policy.json", want: []string{`"op":"policy"`}},
		{name: "policy verbose", args: []string{"policy", "--verbose"}, schema: "result-policy.json", want: []string{`"origin":"default"`, `"writes":"`}},
		{name: "policy config file", args: []string{"policy", "--mode", "read-only"}, env: []string{trust, narrow}, schema: "result-policy.json",
			want: []string{`"origin":"file"`, `"origin":"flag"`, `"origin":"system"`, `"trust":"session"`, `"trust":"trusted"`}},
		{name: "policy refused workspace", args: []string{"policy"}, env: []string{"DSH_FS_CWD=/"}, schema: "result-policy.json",
			want: []string{`"not_writable":[{"path":"/","origin":"cwd","reason":"workspace too broad"`}},
		{name: "version", args: []string{"version"}, schema: "result-version.json", want: []string{`"op":"version"`}},
		{name: "audit verify", args: []string{"audit", "verify", "audit-empty.jsonl"}, schema: "result-audit-verify.json", want: []string{`"lines":0`}},
		{name: "audit verify broken", args: []string{"audit", "verify", "audit-bad.jsonl"}, schema: "failure.json", exit: 1, want: []string{`"FS_AUDIT_BROKEN"`, `"detail":{"line":1}`}},
		{name: "audit verify missing", args: []string{"audit", "verify", "nope.jsonl"}, schema: "failure.json", exit: 1, want: []string{`"FS_NOT_FOUND"`}},
		// failures
		{name: "denied with escalation", args: []string{"write", "../outside/x.txt", "--content", "pwned"}, schema: "failure.json", exit: 3, want: []string{`"workspace_root":"`, `"escalation":{"mode":"danger-full-access"`}},
		{name: "denied read-only", args: []string{"edit", "a.txt", "--old", "one", "--new", "1", "--mode", "read-only"}, schema: "failure.json", exit: 3, want: []string{`"reason":"read-only mode"`}},
		{name: "denied protected", args: []string{"write", ".git/config", "--content", "x", "--mkdir"}, schema: "failure.json", exit: 3, want: []string{`"reason":"protected path"`}},
		{name: "denied deny_read", args: []string{"read", ".env"}, env: []string{trust}, schema: "failure.json", exit: 3, want: []string{`"reason":"deny_read"`}},
		{name: "denied session widening", args: []string{"read", "a.txt"}, env: []string{never, "DSH_FS_MODE=danger-full-access"}, schema: "failure.json", exit: 3, want: []string{`"reason":"session cannot widen the policy"`}},
		{name: "denied workspace too broad", args: []string{"write", "x.txt", "--content", "x"}, env: []string{"DSH_FS_CWD=/"}, schema: "failure.json", exit: 3, want: []string{`"reason":"workspace too broad"`}},
		{name: "denied escalation refused", args: []string{"write", "../outside/y.txt", "--content", "y", "--escalate", "danger-full-access"}, env: []string{never}, schema: "failure.json", exit: 3, want: []string{`refused`}},
		{name: "denied escalation not approved", args: []string{"write", "../outside/y.txt", "--content", "y", "--escalate", "danger-full-access"}, schema: "failure.json", exit: 3, want: []string{`"reason":"escalation not approved"`}},
		{name: "not found", args: []string{"read", "nope.txt"}, schema: "failure.json", exit: 1, want: []string{`"FS_NOT_FOUND"`}},
		{name: "is dir", args: []string{"read", "tree"}, schema: "failure.json", exit: 1, want: []string{`"FS_IS_DIR"`}},
		{name: "binary", args: []string{"read", "bin.dat"}, schema: "failure.json", exit: 1, want: []string{`"FS_BINARY"`}},
		{name: "exists", args: []string{"write", "exists.txt", "--content", "clobbered"}, schema: "failure.json", exit: 1, want: []string{`"detail":{"sha256":"01d09d19c2139a46aebfb577780d123d7396e97201bc7ead210a2ebff8239dee","size":4}`}},
		{name: "stale", args: []string{"write", "stale.txt", "--content", "v2", "--if-match", staleSum}, schema: "failure.json", exit: 1, want: []string{`"FS_STALE"`}},
		{name: "stale with its diff", args: []string{"edit", "stale.txt", "--old", "v1", "--new", "v2", "--if-match", harness.SHA256Hex([]byte("v0\n")), "--if-match-content", "-"}, stdin: "v0\n",
			schema: "failure.json", exit: 1, want: []string{`"FS_STALE"`, `"diff":{"added":1,"removed":1,"text":"--- a/stale.txt\n+++ b/stale.txt\n@@ -1 +1 @@\n-v0\n+v1\n"}`}},
		{name: "stale with its diff omitted", args: []string{"write", "stale.txt", "--content", "v2", "--if-match", harness.SHA256Hex([]byte("v0\n")), "--if-match-content", "-"}, stdin: "v0\n",
			env: []string{"DSH_FS_DIFF_BASIS_MAX_BYTES=1"}, schema: "failure.json", exit: 1, want: []string{`"FS_STALE"`, `"diff":{"omitted":"basis_too_large"}`}},
		{name: "edit ambiguous", args: []string{"edit", "amb.txt", "--old", "dup", "--new", "x"}, schema: "failure.json", exit: 1, want: []string{`"detail":{"edit":1,"count":2,"lines":[1,3],"matches":[{"line":1,"text":"dup"},{"line":3,"text":"dup"}]}`}},
		{name: "edit no match closest", args: []string{"edit", "nm.txt", "--old", "    return 1", "--new", "return 2"}, schema: "failure.json", exit: 1, want: []string{`"closest":{"start_line":2`}},
		{name: "edit no match partial", args: []string{"edit", "nm.txt", "--old", "func f() {\n\treturn 9\n}", "--new", "x"}, schema: "failure.json", exit: 1, want: []string{`"partial":true`}},
		{name: "edit no match none", args: []string{"edit", "nm.txt", "--old", "absent", "--new", "x"}, schema: "failure.json", exit: 1, want: []string{`"detail":{"edit":1}`}},
		{name: "config invalid", args: []string{"read", "a.txt"}, env: []string{"DSH_FS_CONFIG=" + filepath.Join(cfg, "bad.yaml")}, schema: "failure.json", exit: 2, want: []string{`"FS_CONFIG_INVALID"`}},
		{name: "usage unknown flag", args: []string{"read", "a.txt", "--bogus"}, schema: "failure.json", exit: 2, want: []string{`"op":"read"`, `"FS_INVALID_ARGUMENT"`, `"detail":{"usage":"dsh-fs read PATH [flags]"}`}},
		{name: "usage did you mean", args: []string{"edit", "a.txt", "--old-text", "x"}, schema: "failure.json", exit: 2, want: []string{`"did_you_mean":["--old"]`}},
		// patch
		{name: "patch", args: []string{"patch", "--from", "-"}, stdin: "*** Begin Patch\n*** Update File: p1.txt\n@@\n one\n-two\n+TWO\n*** Add File: p/new.txt\n+new\n*** Delete File: p2.txt\n*** Update File: p3.txt\n*** Move to: p4.txt\n*** End Patch\n",
			schema: "result-patch.json", want: []string{`"action":"updated"`, `"action":"created"`, `"action":"deleted"`, `"action":"moved","from":"p3.txt"`}},
		{name: "patch dry run", args: []string{"patch", "--from", "-", "--dry-run"}, stdin: "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n", schema: "result-patch.json", want: []string{`"format":"unified"`, `"dry_run":true`}},
		{name: "patch no match", args: []string{"patch", "--from", "-"}, stdin: "*** Begin Patch\n*** Update File: nm.txt\n@@\n-    return 1\n+    return 2\n*** End Patch\n", schema: "failure.json", exit: 1, want: []string{`"detail":{"file":"nm.txt","hunk":1,"patch_line":3,"closest":{`}},
		{name: "patch malformed", args: []string{"patch", "--from", "-"}, stdin: "*** Begin Patch\n", schema: "failure.json", exit: 2, want: []string{`"FS_INVALID_ARGUMENT"`}},
		{name: "usage bad escalate", args: []string{"write", "z.txt", "--content", "z", "--escalate", "root"}, schema: "failure.json", exit: 2, want: []string{`"FS_INVALID_ARGUMENT"`}},
		{name: "usage missing command", args: nil, schema: "failure.json", exit: 2, want: []string{`"op":""`}},
	}

	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "DSH_FS_") || k == "HOME" || k == "XDG_CONFIG_HOME" || k == "TMPDIR" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"DSH_FS_CWD="+ws,
		"DSH_FS_TMP=false",
		"HOME="+filepath.Join(dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"),
		"DSH_FS_TEST_SYSTEM_DIR="+filepath.Join(dir, "etc"),
		"DSH_FS_TEST_HOME="+filepath.Join(dir, "home"),
	)

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // every case has its own files
			sch := schemas[tc.schema]
			if sch == nil {
				t.Fatalf("no schema %s", tc.schema)
			}
			c := exec.Command("dsh-fs", tc.args...)
			c.Dir = ws
			c.Env = append(slices.Clip(env), tc.env...)
			c.Stdin = strings.NewReader(tc.stdin)
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			err := c.Run()
			exit := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			out := stdout.String()
			if exit != tc.exit {
				t.Errorf("exit status %d, want %d\nstdout: %s\nstderr: %s", exit, tc.exit, out, stderr.String())
			}
			if strings.Count(out, "\n") != 1 || !strings.HasSuffix(out, "\n") {
				t.Fatalf("stdout is not one line:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %s:\n%s", w, out)
				}
			}
			harness.Validate(t, sch, tc.schema, out)
		})
	}

	// A schema that let a renamed, missing or misspelled field through would
	// not pin anything: each mutation of a real result must be rejected.
	t.Run("drift is rejected", func(t *testing.T) {
		read := `{"ok":true,"op":"read","path":"a","resolved":"/w/a","mode":"workspace-write","content":"x\n","start_line":1,"end_line":1,"total_lines":1,"truncated":false,"size":2,"sha256":"` + strings.Repeat("a", 64) + `","encoding":"utf-8","line_endings":"lf"}`
		denied := `{"ok":false,"op":"write","path":"../x","resolved":"/x","mode":"workspace-write","error":{"code":"FS_SANDBOX_DENIED","message":"write: ../x: outside writable roots","mode":"workspace-write","reason":"outside writable roots","writable_roots":["/w"]},"marker":"[sandbox: file access denied under workspace-write mode]","escalation":{"mode":"danger-full-access","hint":"retry"}}`
		harness.Validate(t, schemas["result-read.json"], "result-read.json", read)
		harness.Validate(t, schemas["failure.json"], "failure.json", denied)
		moved := `{"ok":true,"op":"move","path":"a","resolved":"/w/a","mode":"workspace-write","destination":"b","destination_resolved":"/w/b","type":"file"}`
		removed := `{"ok":true,"op":"rm","path":"a","resolved":"/w/a","mode":"workspace-write","type":"symlink"}`
		made := `{"ok":true,"op":"mkdir","path":"d","resolved":"/w/d","mode":"workspace-write","created":true}`
		harness.Validate(t, schemas["result-move.json"], "result-move.json", moved)
		harness.Validate(t, schemas["result-rm.json"], "result-rm.json", removed)
		harness.Validate(t, schemas["result-mkdir.json"], "result-mkdir.json", made)
		bad := []struct{ schema, doc string }{
			{"result-move.json", strings.Replace(moved, `"destination_resolved"`, `"dest_resolved"`, 1)},
			{"result-move.json", strings.Replace(moved, `"type":"file"`, `"type":"folder"`, 1)},
			{"result-move.json", strings.Replace(moved, `}`, `,"dry_run":false}`, 1)},
			{"result-rm.json", strings.Replace(removed, `"type":"symlink"`, `"removed":true`, 1)},
			{"result-rm.json", strings.Replace(removed, `"op":"rm"`, `"op":"remove"`, 1)},
			{"result-mkdir.json", strings.Replace(made, `"created":true`, `"created":"yes"`, 1)},
			{"result-mkdir.json", strings.Replace(made, `}`, `,"parents":true}`, 1)},
			{"result-read.json", strings.Replace(read, `"start_line"`, `"startLine"`, 1)},
			{"result-read.json", strings.Replace(read, `"sha256":"`, `"sha":"`, 1)},
			{"result-read.json", strings.Replace(read, `"ok":true`, `"ok":false`, 1)},
			{"result-read.json", strings.Replace(read, `"mode":"workspace-write"`, `"mode":"workspace"`, 1)},
			{"result-read.json", strings.Replace(read, `"op":"read"`, `"op":"write"`, 1)},
			{"result-read.json", strings.Replace(read, `}`, `,"extra":1}`, 1)},
			{"failure.json", strings.Replace(denied, `"FS_SANDBOX_DENIED"`, `"FS_DENIED"`, 1)},
			{"failure.json", strings.Replace(denied, `"marker":`, `"mark":`, 1)},
			{"failure.json", strings.Replace(denied, `"reason":"outside writable roots"`, `"reason":"deny_read"`, 1)},
			{"failure.json", strings.Replace(denied, `"ok":false`, `"ok":true`, 1)},
		}
		for _, b := range bad {
			doc, err := jsonschema.UnmarshalJSON(strings.NewReader(b.doc))
			if err != nil {
				t.Fatal(err)
			}
			if schemas[b.schema].Validate(doc) == nil {
				t.Errorf("%s accepts %s", b.schema, b.doc)
			}
		}
	})
}
