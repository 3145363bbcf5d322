package cli

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/fserr"
)

// parseOptions runs args (the command's name first) through the real
// command tree, with the command newCmd builds, given a runF that captures
// its Options, in place of the tree's own. It returns the Options the run
// would have been given (nil if cobra refused the line first) and the
// error as App.Run reports it before a call starts: cobra's complaints
// become usage errors (usageError). Nothing runs: no policy is loaded, no
// file is opened.
func parseOptions[O any](t *testing.T, newCmd func(*invocation, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	app := &invocation{App: App{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard}}
	var got *O
	sub := newCmd(app, func(opts *O) error {
		got = opts
		return nil
	})
	root := newCmdRoot(app)
	for _, c := range root.Commands() {
		if c.Name() == sub.Name() {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(sub)
	root.SetArgs(args)
	root.SetIn(app.Stdin)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	c, err := root.ExecuteC()
	if err == nil {
		if got == nil {
			t.Fatalf("%q: no error and runF was not called", args)
		}
		return got, nil
	}
	if app.started {
		t.Fatalf("%q: a call started: %v", args, err)
	}
	// As App.Run: what cobra said before any run began is a usage error.
	var coder fserr.Coder
	if !errors.As(err, &coder) || coder.Code() == fserr.InvalidArgument {
		err = usageError(c, root, err)
	}
	return got, err
}

// wantUsage checks err is the usage error, code FS_INVALID_ARGUMENT and a
// message containing msg, and that no run was given Options.
func wantUsage[O any](t *testing.T, opts *O, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want a usage error %q", msg)
	}
	if code := fserr.CodeOf(err); code != fserr.InvalidArgument {
		t.Errorf("code %s, want %s (%v)", code, fserr.InvalidArgument, err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("error %q, want it to contain %q", err, msg)
	}
	if opts != nil {
		t.Errorf("runF was given %+v despite the usage error", opts)
	}
}

// wantCheck checks err is check's refusal: FS_INVALID_ARGUMENT with msg,
// or nil for msg "".
func wantCheck(t *testing.T, err error, msg string) {
	t.Helper()
	if msg == "" {
		if err != nil {
			t.Errorf("check: %v, want nil", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("check: nil, want %q", msg)
	}
	if code := fserr.CodeOf(err); code != fserr.InvalidArgument {
		t.Errorf("check: code %s, want %s (%v)", code, fserr.InvalidArgument, err)
	}
	if !strings.Contains(err.Error(), msg) {
		t.Errorf("check: %q, want it to contain %q", err, msg)
	}
}

// str is a pointer to s, for the Options' "given" strings.
func str(s string) *string { return &s }

// sameString says a and b are both nil, or point at equal strings.
func sameString(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show(p *string) string {
	if p == nil {
		return "nil"
	}
	return "&" + *p
}

// TestPolicyFlagsIntoOptions: the shared policy flags reach the Options
// as the flag set config.Load reads, before or after the command, and
// --escalate as a field of its own.
func TestPolicyFlagsIntoOptions(t *testing.T) {
	opts, err := parseOptions(t, NewCmdStat, "--mode", "read-only", "stat", "go.mod", "--cwd", "/tmp/w", "--escalate", "workspace-write")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Path != "go.mod" || opts.Policy.Escalate != "workspace-write" {
		t.Errorf("path %q, escalate %q", opts.Path, opts.Policy.Escalate)
	}
	for name, want := range map[string]string{config.FlagMode: "read-only", config.FlagCwd: "/tmp/w"} {
		f := opts.Policy.Settings.Lookup(name)
		if f == nil || !f.Changed || f.Value.String() != want {
			t.Errorf("--%s in the settings: %+v, want %q given", name, f, want)
		}
	}
	if f := opts.Policy.Settings.Lookup(config.FlagOutput); f == nil || f.Changed {
		t.Errorf("--output not typed but %+v", f)
	}

	opts, err = parseOptions(t, NewCmdStat, "stat", "go.mod")
	if err != nil {
		t.Fatal(err)
	}
	if opts.Policy.Escalate != "" {
		t.Errorf("no --escalate, but %q", opts.Policy.Escalate)
	}
	_, err = parseOptions(t, NewCmdStat, "stat", "a", "b")
	wantUsage(t, (*StatOptions)(nil), err, "stat: accepts 1 arg(s), received 2")
}

func TestReadOptions(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		offset int
		limit  *int // nil: not given
		raw    bool
		usage  string
	}{
		{name: "defaults", args: []string{"read", "a.go"}, offset: 1},
		{name: "window", args: []string{"read", "a.go", "--offset", "120", "--limit", "40"}, offset: 120, limit: ptr(40)},
		// --limit 0 is given, not the default: the request says so.
		{name: "limit 0 given", args: []string{"read", "a.go", "--limit", "0"}, offset: 1, limit: ptr(0)},
		{name: "raw", args: []string{"read", "--raw", "a.png"}, offset: 1, raw: true},
		{name: "offset not a number", args: []string{"read", "a.go", "--offset", "x"}, usage: `invalid argument "x" for "--offset"`},
		{name: "no path", args: []string{"read"}, usage: "read: accepts 1 arg(s), received 0"},
		{name: "unknown flag", args: []string{"read", "a.go", "--lines", "3"}, usage: "read: unknown flag --lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdRead, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{false: "a.go", true: "a.png"}[tc.raw]; opts.Path != want {
				t.Errorf("path %q, want %q", opts.Path, want)
			}
			if opts.Offset != tc.offset || opts.Raw != tc.raw {
				t.Errorf("offset %d raw %t, want %d %t", opts.Offset, opts.Raw, tc.offset, tc.raw)
			}
			if (opts.Limit == nil) != (tc.limit == nil) || (opts.Limit != nil && *opts.Limit != *tc.limit) {
				t.Errorf("limit %v, want %v", deref(opts.Limit), deref(tc.limit))
			}
		})
	}
}

func ptr(n int) *int { return &n }

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestEditOptions(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		args                      []string
		old, new, oldFile, newFil *string
		given                     *string // --if-match-content
		edits                     string
		replaceAll, dryRun        bool
		ifMatch, diff             string
		usage                     string // cobra's refusal
		check                     string // check's refusal, once the call began
	}{
		{name: "texts", args: []string{"edit", "a.go", "--old", "x := 1", "--new", "x := 2"}, old: str("x := 1"), new: str("x := 2"), diff: "auto"},
		// An empty --new is given: it deletes the old text.
		{name: "empty new", args: []string{"edit", "a.go", "--old", "x", "--new", ""}, old: str("x"), new: str(""), diff: "auto"},
		{name: "files", args: []string{"edit", "a.go", "--old-file", "o.txt", "--new-file", "-"}, oldFile: str("o.txt"), newFil: str("-"), diff: "auto"},
		{name: "mixed", args: []string{"edit", "a.go", "--old", "x", "--new-file", "n.txt", "--replace-all"}, old: str("x"), newFil: str("n.txt"), replaceAll: true, diff: "auto"},
		{name: "mutation", args: []string{"edit", "a.go", "--edits", "e.json", "--if-match", "abc", "--dry-run", "--diff", "summary"}, edits: "e.json", ifMatch: "abc", dryRun: true, diff: "summary"},
		{name: "no new", args: []string{"edit", "a.go", "--old", "x"}, old: str("x"), diff: "auto", check: "edit: give --old or --old-file, and --new or --new-file; or --edits"},
		{name: "nothing", args: []string{"edit", "a.go"}, diff: "auto", check: "edit: give --old or --old-file"},
		{name: "both stdin", args: []string{"edit", "a.go", "--old-file", "-", "--new-file", "-"}, oldFile: str("-"), newFil: str("-"), diff: "auto", check: "edit: --old-file and --new-file cannot both be - (standard input)"},
		// An empty --old-file is given, and refused when read
		// (readSource), as before.
		{name: "empty old-file", args: []string{"edit", "a.go", "--old-file", "", "--new", "y"}, oldFile: str(""), new: str("y"), diff: "auto"},
		{name: "bad diff", args: []string{"edit", "a.go", "--old", "x", "--new", "y", "--diff", "none"}, old: str("x"), new: str("y"), diff: "none", check: "none"},
		{name: "old and old-file", args: []string{"edit", "a.go", "--old", "x", "--old-file", "o", "--new", "y"}, usage: "edit: give --old or --old-file, not both"},
		{name: "new and new-file", args: []string{"edit", "a.go", "--old", "x", "--new", "y", "--new-file", "n"}, usage: "edit: give --new or --new-file, not both"},
		{name: "edits and old", args: []string{"edit", "a.go", "--edits", "-", "--old", "x"}, usage: "edit: give --edits or --old, not both"},
		{name: "typo", args: []string{"edit", "a.go", "--old-text", "x"}, usage: "edit: unknown flag --old-text; did you mean --old?"},
		{name: "given back", args: []string{"edit", "a.go", "--old", "x", "--new", "y", "--if-match", "abc", "--if-match-content", "r.txt"}, old: str("x"), new: str("y"), given: str("r.txt"), ifMatch: "abc", diff: "auto"},
		{name: "given back empty", args: []string{"edit", "a.go", "--old", "x", "--new", "y", "--if-match-content", ""}, old: str("x"), new: str("y"), given: str(""), diff: "auto", check: "edit: --if-match-content needs a file name, or - for stdin"},
		{name: "given back and old-file stdin", args: []string{"edit", "a.go", "--old-file", "-", "--new", "y", "--if-match-content", "-"}, oldFile: str("-"), new: str("y"), given: str("-"), diff: "auto", check: "edit: --old-file and --if-match-content cannot both be - (standard input)"},
		{name: "given back and edits stdin", args: []string{"edit", "a.go", "--edits", "-", "--if-match-content", "-"}, edits: "-", given: str("-"), diff: "auto", check: "edit: --edits and --if-match-content cannot both be - (standard input)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdEdit, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.Path != "a.go" {
				t.Errorf("path %q", opts.Path)
			}
			for _, f := range []struct {
				flag      string
				got, want *string
			}{{"old", opts.Old, tc.old}, {"new", opts.New, tc.new}, {"old-file", opts.OldFile, tc.oldFile}, {"new-file", opts.NewFile, tc.newFil}, {"if-match-content", opts.IfMatchContent, tc.given}} {
				if !sameString(f.got, f.want) {
					t.Errorf("--%s: %s, want %s", f.flag, show(f.got), show(f.want))
				}
			}
			if opts.Edits != tc.edits || opts.ReplaceAll != tc.replaceAll || opts.IfMatch != tc.ifMatch || opts.DryRun != tc.dryRun || opts.Diff != tc.diff {
				t.Errorf("edits %q replace-all %t if-match %q dry-run %t diff %q", opts.Edits, opts.ReplaceAll, opts.IfMatch, opts.DryRun, opts.Diff)
			}
			wantCheck(t, opts.check(), tc.check)
		})
	}
}

func TestWriteOptions(t *testing.T) {
	for _, tc := range []struct {
		name           string
		args           []string
		content, from  *string
		given          *string // --if-match-content
		mkdir          bool
		overwrite      bool
		encoding, diff string
		usage, check   string
	}{
		{name: "content", args: []string{"write", "n.md", "--content", "hi"}, content: str("hi"), diff: "auto"},
		// An empty --content is an empty file, not "no content".
		{name: "empty content", args: []string{"write", "n.md", "--content", ""}, content: str(""), diff: "auto"},
		{name: "from file", args: []string{"write", "n.md", "--from", "d.md", "--mkdir", "--overwrite", "--encoding", "utf-16le"}, from: str("d.md"), mkdir: true, overwrite: true, encoding: "utf-16le", diff: "auto"},
		{name: "from stdin", args: []string{"write", "n.md", "--from", "-", "--diff", "full"}, from: str("-"), diff: "full"},
		{name: "empty from", args: []string{"write", "n.md", "--from", ""}, from: str(""), diff: "auto", check: "write: --from needs a file name"},
		// Standard input is read only when asked.
		{name: "no content", args: []string{"write", "n.md"}, diff: "auto", check: "write: no content: give --content TEXT, --from FILE, or --from - to read standard input"},
		{name: "bad diff", args: []string{"write", "n.md", "--content", "x", "--diff", "lots"}, content: str("x"), diff: "lots", check: "lots"},
		{name: "both sources", args: []string{"write", "n.md", "--content", "x", "--from", "-"}, usage: "write: give --content or --from, not both"},
		{name: "no path", args: []string{"write", "--content", "x"}, usage: "write: accepts 1 arg(s), received 0"},
		{name: "given back", args: []string{"write", "n.md", "--content", "x", "--if-match-content", "-"}, content: str("x"), given: str("-"), diff: "auto"},
		{name: "given back and from stdin", args: []string{"write", "n.md", "--from", "-", "--if-match-content", "-"}, from: str("-"), given: str("-"), diff: "auto", check: "write: --from and --if-match-content cannot both be - (standard input)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdWrite, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !sameString(opts.IfMatchContent, tc.given) {
				t.Errorf("--if-match-content %s, want %s", show(opts.IfMatchContent), show(tc.given))
			}
			if opts.Path != "n.md" || !sameString(opts.Content, tc.content) || !sameString(opts.From, tc.from) {
				t.Errorf("path %q content %s from %s, want content %s from %s", opts.Path, show(opts.Content), show(opts.From), show(tc.content), show(tc.from))
			}
			if opts.Mkdir != tc.mkdir || opts.Overwrite != tc.overwrite || opts.Encoding != tc.encoding || opts.Diff != tc.diff {
				t.Errorf("mkdir %t overwrite %t encoding %q diff %q", opts.Mkdir, opts.Overwrite, opts.Encoding, opts.Diff)
			}
			wantCheck(t, opts.check(), tc.check)
		})
	}
}

func TestLsOptions(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		path       string
		depth      int
		depthGiven bool
		recursive  bool
		all        bool
		limit      int
		usage      string
		check      string
	}{
		{name: "defaults", args: []string{"ls"}, path: ".", limit: 1000},
		{name: "depth", args: []string{"ls", "src", "--depth", "2", "--recursive"}, path: "src", depth: 2, depthGiven: true, recursive: true, limit: 1000},
		// A typed 0 is refused; the default 0 is "no bound".
		{name: "depth 0 typed", args: []string{"ls", "--depth", "0"}, path: ".", depthGiven: true, limit: 1000, check: "ls: --depth must be 1 or more (--recursive alone has no bound)"},
		{name: "depth negative", args: []string{"ls", "--depth=-1"}, path: ".", depth: -1, depthGiven: true, limit: 1000, check: "ls: --depth must be 1 or more"},
		{name: "all limit", args: []string{"ls", ".", "--all", "--limit", "50"}, path: ".", all: true, limit: 50},
		{name: "two paths", args: []string{"ls", "a", "b"}, usage: "ls: accepts at most 1 arg(s), received 2"},
		{name: "typo", args: []string{"ls", "--recurse"}, usage: "ls: unknown flag --recurse; did you mean --recursive?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdLs, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.Path != tc.path || opts.Depth != tc.depth || opts.DepthGiven != tc.depthGiven || opts.Recursive != tc.recursive || opts.All != tc.all || opts.Limit != tc.limit {
				t.Errorf("got path %q depth %d given %t recursive %t all %t limit %d", opts.Path, opts.Depth, opts.DepthGiven, opts.Recursive, opts.All, opts.Limit)
			}
			wantCheck(t, opts.check(), tc.check)
		})
	}
}

func TestPatchOptions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		from    string
		dryRun  bool
		diff    string
		ifMatch map[string]string
		usage   string
		check   string
	}{
		{name: "stdin", args: []string{"patch", "--from", "-"}, from: "-", diff: "summary", ifMatch: map[string]string{}},
		{name: "file dry run", args: []string{"patch", "--from", "fix.diff", "--dry-run", "--diff", "full"}, from: "fix.diff", dryRun: true, diff: "full", ifMatch: map[string]string{}},
		{name: "pins", args: []string{"patch", "--from", "-", "--if-match", "a.go=abc", "--if-match", "b/c.go=def"}, from: "-", diff: "summary", ifMatch: map[string]string{"a.go": "abc", "b/c.go": "def"}},
		{name: "no from", args: []string{"patch"}, diff: "summary", check: "patch: give --from FILE, or --from - to read the patch from standard input"},
		{name: "bad pin", args: []string{"patch", "--from", "-", "--if-match", "abc"}, from: "-", diff: "summary", check: "patch: --if-match abc: want PATH=SHA256"},
		{name: "pin without path", args: []string{"patch", "--from", "-", "--if-match", "=abc"}, from: "-", diff: "summary", check: "patch: --if-match =abc: want PATH=SHA256"},
		// The diff form is checked first, as it always was.
		{name: "bad diff", args: []string{"patch", "--diff", "x"}, diff: "x", check: "x"},
		{name: "argument", args: []string{"patch", "fix.diff"}, usage: `patch: takes no argument, got "fix.diff"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdPatch, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.From != tc.from || opts.DryRun != tc.dryRun || opts.Diff != tc.diff {
				t.Errorf("from %q dry-run %t diff %q", opts.From, opts.DryRun, opts.Diff)
			}
			pins, err := opts.check()
			wantCheck(t, err, tc.check)
			if tc.check == "" && !equalMaps(pins, tc.ifMatch) {
				t.Errorf("pins %v, want %v", pins, tc.ifMatch)
			}
		})
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestGrepOptions(t *testing.T) {
	for _, tc := range []struct {
		name       string
		args       []string
		pattern    string
		paths      []string
		fixed      bool
		ignoreCase bool
		context    int
		globs      []string
		usage      string
	}{
		{name: "default path", args: []string{"grep", "TODO"}, pattern: "TODO", paths: []string{"."}},
		// -n, -r and -E are what grep always does: accepted, no change.
		{name: "habits", args: []string{"grep", "-rnE", "a|b", "src"}, pattern: "a|b", paths: []string{"src"}},
		{name: "habit long names", args: []string{"grep", "--line-number", "--recursive", "--extended-regexp", "x"}, pattern: "x", paths: []string{"."}},
		{name: "F is fixed", args: []string{"grep", "-F", "a.b(", "x", "y"}, pattern: "a.b(", paths: []string{"x", "y"}, fixed: true},
		{name: "rnF", args: []string{"grep", "-rnFi", "a.b"}, pattern: "a.b", paths: []string{"."}, fixed: true, ignoreCase: true},
		{name: "context globs", args: []string{"grep", "-C", "2", "--glob", "*.go", "--glob", "!*_test.go", "x"}, pattern: "x", paths: []string{"."}, context: 2, globs: []string{"*.go", "!*_test.go"}},
		// A shell's grep flag this one has under another name is
		// answered with that name.
		{name: "l habit", args: []string{"grep", "-l", "x"}, usage: "grep: unknown flag -l; did you mean --files?"},
		{name: "include habit", args: []string{"grep", "--include", "*.go", "x"}, usage: "grep: unknown flag --include; did you mean --glob?"},
		{name: "no pattern", args: []string{"grep"}, usage: "grep: requires at least 1 arg(s), only received 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdGrep, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.Pattern != tc.pattern || strings.Join(opts.Paths, "\x00") != strings.Join(tc.paths, "\x00") {
				t.Errorf("pattern %q paths %q", opts.Pattern, opts.Paths)
			}
			if opts.Fixed != tc.fixed || opts.IgnoreCase != tc.ignoreCase || opts.Context != tc.context || strings.Join(opts.Globs, ",") != strings.Join(tc.globs, ",") {
				t.Errorf("fixed %t ignore-case %t context %d globs %q", opts.Fixed, opts.IgnoreCase, opts.Context, opts.Globs)
			}
		})
	}
}

func TestFindOptions(t *testing.T) {
	for _, tc := range []struct {
		name, glob, path, typ, after string
		args                         []string
		limit                        int
		noIgnore                     bool
		usage                        string
	}{
		{name: "defaults", args: []string{"find", "**/*.go"}, glob: "**/*.go", path: ".", limit: 1000},
		{name: "all flags", args: []string{"find", "*_test.go", "pkg", "--type", "file", "--limit", "50", "--no-ignore", "--after", "CUR"}, glob: "*_test.go", path: "pkg", typ: "file", limit: 50, noIgnore: true, after: "CUR"},
		{name: "three args", args: []string{"find", "a", "b", "c"}, usage: "find: accepts between 1 and 2 arg(s), received 3"},
		{name: "limit not a number", args: []string{"find", "a", "--limit", "many"}, usage: `invalid argument "many" for "--limit"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdFind, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.Glob != tc.glob || opts.Path != tc.path || opts.Type != tc.typ || opts.Limit != tc.limit || opts.NoIgnore != tc.noIgnore || opts.After != tc.after {
				t.Errorf("got %+v", opts.Find)
			}
		})
	}
}

func TestExecOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		argv     []string
		cwd      string
		config   string
		escalate string
		usage    string
	}{
		{name: "dashdash", args: []string{"exec", "--cwd", "/tmp/p", "--", "bash"}, argv: []string{"bash"}, cwd: "/tmp/p"},
		// Everything after CMD is CMD's own, flags too.
		{name: "cmd flags", args: []string{"exec", "--mode", "read-only", "sh", "-c", "make --cwd x"}, argv: []string{"sh", "-c", "make --cwd x"}},
		{name: "after dashdash", args: []string{"exec", "--", "--cwd", "x"}, argv: []string{"--cwd", "x"}},
		{name: "session config", args: []string{"exec", "--config", "s.yaml", "--", "go", "test"}, argv: []string{"go", "test"}, config: "s.yaml"},
		// exec refuses --escalate when it runs; the flag reaches it.
		{name: "escalate", args: []string{"exec", "--escalate", "workspace-write", "sh"}, argv: []string{"sh"}, escalate: "workspace-write"},
		{name: "no cmd", args: []string{"exec", "--cwd", "/tmp"}, usage: "exec: requires at least 1 arg(s), only received 0"},
		{name: "nothing after dashdash", args: []string{"exec", "--"}, usage: "exec: requires at least 1 arg(s), only received 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(t, NewCmdExec, tc.args...)
			if tc.usage != "" {
				wantUsage(t, opts, err, tc.usage)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(opts.Argv, "\x00") != strings.Join(tc.argv, "\x00") || opts.Policy.Escalate != tc.escalate {
				t.Errorf("argv %q escalate %q", opts.Argv, opts.Policy.Escalate)
			}
			flags := opts.Policy.Settings
			if got := flags.Lookup(config.FlagCwd).Value.String(); got != tc.cwd {
				t.Errorf("--cwd %q, want %q", got, tc.cwd)
			}
			// exec's own --config, the session's trusted file, is the
			// one the settings see.
			if f := flags.Lookup(config.FlagConfig); f.Value.String() != tc.config || !strings.Contains(f.Usage, "trusted") {
				t.Errorf("--config %q (%s), want %q from exec's own flag", f.Value, f.Usage, tc.config)
			}
		})
	}
}

func TestPolicyOptions(t *testing.T) {
	opts, err := parseOptions(t, NewCmdPolicy, "policy", "--context", "--output", "text")
	if err != nil {
		t.Fatal(err)
	}
	if !opts.Context || opts.Verbose {
		t.Errorf("context %t verbose %t", opts.Context, opts.Verbose)
	}
	if f := opts.Policy.Settings.Lookup(config.FlagOutput); !f.Changed || f.Value.String() != "text" {
		t.Errorf("--output: %+v", f)
	}
	opts, err = parseOptions(t, NewCmdPolicy, "policy", "extra")
	wantUsage(t, opts, err, `policy: takes no argument, got "extra"`)
}
