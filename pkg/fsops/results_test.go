package fsops

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/config"
	ifsops "github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/search"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// TestResultsMatchTheCommand: each result type of this package has the
// JSON fields of the command's result it is copied from (call.go's
// public), in the same order with the same options, nested results
// included, so a field the command gains or renames cannot be dropped or
// misread here without this failing; and each call of this package,
// encoded as the command encodes its result, is byte for byte the
// command's result less its header, for the same call on the same tree
// (the reads, which restrict no process: a mutation of the command would
// put this test's process under Landlock).
func TestResultsMatchTheCommand(t *testing.T) {
	for _, tc := range []struct{ public, internal reflect.Type }{
		{reflect.TypeFor[ReadResult](), reflect.TypeFor[ifsops.ReadResult]()},
		{reflect.TypeFor[WriteResult](), reflect.TypeFor[ifsops.WriteResult]()},
		{reflect.TypeFor[EditResult](), reflect.TypeFor[ifsops.EditResult]()},
		{reflect.TypeFor[PatchResult](), reflect.TypeFor[ifsops.PatchResult]()},
		{reflect.TypeFor[ListResult](), reflect.TypeFor[ifsops.ListResult]()},
		{reflect.TypeFor[StatResult](), reflect.TypeFor[ifsops.StatResult]()},
		{reflect.TypeFor[MkdirResult](), reflect.TypeFor[ifsops.MkdirResult]()},
		{reflect.TypeFor[MoveResult](), reflect.TypeFor[ifsops.MoveResult]()},
		{reflect.TypeFor[RemoveResult](), reflect.TypeFor[ifsops.RemoveResult]()},
		{reflect.TypeFor[GrepResult](), reflect.TypeFor[search.GrepResult]()},
		{reflect.TypeFor[FindResult](), reflect.TypeFor[search.FindResult]()},
	} {
		t.Run("fields/"+tc.public.Name(), func(t *testing.T) {
			got, want := jsonFields(tc.public, ""), jsonFields(tc.internal, "")
			if len(want) < 2 {
				t.Fatalf("%v has %d JSON fields: the walk saw nothing", tc.internal, len(want))
			}
			if !slices.Equal(got, want) {
				t.Errorf("fields differ from the command's %v:\n got %v\nwant %v", tc.internal, got, want)
			}
		})
	}

	dir, session := searchTree(t)
	sb, err := sandbox.Open(sandbox.Options{Dir: dir, ConfigFile: session})
	if err != nil {
		t.Fatal(err)
	}
	first, err := Grep(sb, "TODO", nil, &GrepOptions{NoIgnore: true, Limit: 1})
	if err != nil || first.Cursor == "" {
		t.Fatalf("no cursor to continue from: %+v, %v", first, err)
	}
	cursor := first.Cursor
	for _, tc := range []struct {
		name string
		args []string
		call func() (any, error)
		code string // the failure's code; "" for success
	}{
		{"grep", []string{"grep", "TODO"},
			func() (any, error) { return Grep(sb, "TODO", nil, nil) }, ""},
		{"grep ignoring case with context and globs", []string{"grep", "todo", "src", ".", "-i", "-C", "1", "--glob", "*.go", "--glob", "!*_test.go"},
			func() (any, error) {
				return Grep(sb, "todo", []string{"src", "."}, &GrepOptions{IgnoreCase: true, Context: 1, Globs: []string{"*.go", "!*_test.go"}})
			}, ""},
		{"grep files given, truncated, a line cut", []string{"grep", "TODO", "src/long.txt", "src/a.go", "--limit", "1", "--max-line-bytes", "20"},
			func() (any, error) {
				return Grep(sb, "TODO", []string{"src/long.txt", "src/a.go"}, &GrepOptions{Limit: 1, MaxLineBytes: 20})
			}, ""},
		{"grep after a cursor", []string{"grep", "TODO", "--no-ignore", "--limit", "1", "--after", cursor},
			func() (any, error) {
				return Grep(sb, "TODO", nil, &GrepOptions{NoIgnore: true, Limit: 1, After: cursor})
			}, ""},
		{"grep fixed, counted", []string{"grep", "()", "--fixed", "--count"},
			func() (any, error) { return Grep(sb, "()", nil, &GrepOptions{Fixed: true, Count: true}) }, ""},
		{"grep files", []string{"grep", "package", "--files"},
			func() (any, error) { return Grep(sb, "package", nil, &GrepOptions{Files: true}) }, ""},
		{"grep a bad glob", []string{"grep", "x", "--glob", "a[", "--glob", "x"},
			func() (any, error) { return Grep(sb, "x", nil, &GrepOptions{Globs: []string{"a[", "x"}}) }, sandbox.CodeInvalidArgument},
		{"grep a hidden file", []string{"grep", "TODO", "src", ".env"},
			func() (any, error) { return Grep(sb, "TODO", []string{"src", ".env"}, nil) }, sandbox.CodeDenied},
		{"grep a missing path", []string{"grep", "x", "src", "nope"},
			func() (any, error) { return Grep(sb, "x", []string{"src", "nope"}, nil) }, sandbox.CodeNotFound},
		{"grep a bad pattern", []string{"grep", "("},
			func() (any, error) { return Grep(sb, "(", nil, nil) }, sandbox.CodeInvalidArgument},
		{"find", []string{"find", "**"},
			func() (any, error) { return Find(sb, "**", "", nil) }, ""},
		{"find files with lines, truncated", []string{"find", "*", ".", "--type", "file", "--lines", "--limit", "2", "--no-ignore"},
			func() (any, error) {
				return Find(sb, "*", ".", &FindOptions{Type: "file", Lines: true, Limit: 2, NoIgnore: true})
			}, ""},
		{"find sorted by size", []string{"find", "*.go", "src", "--sort", "size", "--reverse"},
			func() (any, error) { return Find(sb, "*.go", "src", &FindOptions{Sort: "size", Reverse: true}) }, ""},
		{"find in a hidden folder", []string{"find", "*", "secret"},
			func() (any, error) { return Find(sb, "*", "secret", nil) }, sandbox.CodeDenied},
		{"find in a file", []string{"find", "*", "src/a.go"},
			func() (any, error) { return Find(sb, "*", "src/a.go", nil) }, sandbox.CodeNotDir},
		{"read", []string{"read", "src/a.go", "--offset", "2", "--limit", "2"},
			func() (any, error) { return Read(sb, "src/a.go", &ReadOptions{Offset: 2, Limit: 2}) }, ""},
		{"ls", []string{"ls", ".", "--recursive", "--all"},
			func() (any, error) { return List(sb, ".", &ListOptions{Recursive: true, All: true}) }, ""},
		{"stat", []string{"stat", "src/a.go"},
			func() (any, error) { return Stat(sb, "src/a.go") }, ""},
		{"stat a symlink to a hidden file", []string{"stat", "leak"},
			func() (any, error) { return Stat(sb, "leak") }, sandbox.CodeDenied},
	} {
		t.Run("call/"+tc.name, func(t *testing.T) {
			want, failure := command(t, dir, session, tc.args...)
			res, err := tc.call()
			if sandbox.Code(err) != tc.code {
				t.Fatalf("code %q, want %q (%v)", sandbox.Code(err), tc.code, err)
			}
			if failure != nil || err != nil {
				if failure == nil || err == nil {
					t.Fatalf("the command failed with %v, the call with %v", failure, err)
				}
				if got := (errorBody{sandbox.Code(err), err.Error()}); got != *failure {
					t.Fatalf("the call failed with %+v, the command with %+v", got, *failure)
				}
				return
			}
			var got bytes.Buffer
			enc := json.NewEncoder(&got)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(res); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("the call's result differs from the command's:\n got %s\nwant %s", got.Bytes(), want)
			}
		})
	}
}

// errorBody is what a failure result and an error have in common.
type errorBody struct{ Code, Message string }

// command runs the dsh-fs command's args in this process, in the
// workspace dir under the session file session, with the trusted files
// at this build's places, as sandbox.Open reads them; it returns the
// result's JSON less its header, one line, or the failure's error.
func command(t *testing.T, dir, session string, args ...string) ([]byte, *errorBody) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	app := cli.NewApp(config.DefaultLocations())
	app.Stdin, app.Stdout, app.Stderr, app.StdoutTTY = strings.NewReader(""), &stdout, &stderr, false
	status := app.Run(append(args, "--cwd", dir, "--config", session))
	if status != cli.ExitOK {
		var f struct {
			Error struct{ Code, Message string }
		}
		if err := json.Unmarshal(stdout.Bytes(), &f); err != nil || f.Error.Code == "" {
			t.Fatalf("%v: status %d, no failure result (%v):\n%s%s", args, status, err, stdout.Bytes(), stderr.Bytes())
		}
		return nil, &errorBody{f.Error.Code, f.Error.Message}
	}
	return withoutHeader(t, stdout.Bytes()), nil
}

// withoutHeader is the JSON object line with the keys of the result's
// header left out, the others as they were, in their order.
func withoutHeader(t *testing.T, line []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %s", line)
	}
	header := jsonFields(reflect.TypeFor[result.Header](), "")
	out := []byte("{")
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(header, func(f string) bool { return strings.HasPrefix(f, key.(string)+",") }) {
			continue
		}
		k, _ := json.Marshal(key)
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, k...), ':'), v...)
	}
	return append(out, "}\n"...)
}

// jsonFields lists the JSON fields of struct type t as encoding/json
// writes them: "prefix.name,options kind", embedded structs flattened,
// nested structs and slices of them walked.
func jsonFields(t reflect.Type, prefix string) []string {
	var out []string
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if f.Anonymous && tag == "" && ft.Kind() == reflect.Struct {
			out = append(out, jsonFields(ft, prefix)...)
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		out = append(out, prefix+name+","+opts+" "+f.Type.Kind().String())
		if ft.Kind() == reflect.Struct {
			out = append(out, jsonFields(ft, prefix+name+".")...)
		}
	}
	return out
}
