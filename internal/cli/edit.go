package cli

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// EditOptions are the inputs of edit.
type EditOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	// Path is the one file to edit; Paths, when the command line names
	// several or a glob, the files and globs instead.
	Path  string
	Paths []string
	// Old and New are --old and --new, nil when not given (an empty
	// --new deletes the old text).
	Old, New *string
	// OldFile and NewFile are --old-file and --new-file, nil when not
	// given: a file's name, or "-" for standard input.
	OldFile, NewFile *string
	ReplaceAll       bool
	// Occurrence and Line are --occurrence and --line: which one of
	// several matches to replace (0: none picked).
	Occurrence, Line int
	// Edits is --edits, a file of edits or "-"; "" takes the one edit
	// of the flags above.
	Edits string
	// Mutation is --if-match, --dry-run and --diff.
	request.Mutation
	// IfMatchContent is --if-match-content, nil when not given: a file's
	// name, or "-" for standard input.
	IfMatchContent *string
}

// NewCmdEdit returns the edit command; runF replaces editRun in tests.
func NewCmdEdit(app *invocation, runF func(*EditOptions) error) *cobra.Command {
	opts := &EditOptions{App: app}
	var oldText, newText, oldFile, newFile, given string
	c := &cobra.Command{
		Use:        "edit PATH...",
		SuggestFor: []string{"sed", "replace", "str_replace", "modify"},
		Short:      "Replace exact text in a file, once or everywhere, and show the diff",
		Long: `edit replaces --old with --new in PATH. The old text must occur exactly once
unless --replace-all; otherwise nothing changes and the error says where the
matches are, or which lines come closest. --old-file and --new-file read the
texts from files, byte for byte (a heredoc's final newline included), and one
of them may be - for stdin: no shell quoting, no escapes. --edits FILE (or -
for stdin) takes a JSON array of {"old","new","replace_all","occurrence","line"}
applied in order, all or nothing. Where the old text occurs more than once,
--occurrence N replaces the Nth match and --line N the one that starts on line
N. A result's warnings say when the new text adds or drops a final line break
the old text did not have. Line endings (LF/CRLF) and a BOM are kept: type "\n" in a
CRLF file.

Several PATHs, or a glob (one with * ? [ or {, matched beneath the working
folder as find matches it), edit every file the same way, all or nothing: each
file is checked and its new content staged before the first is replaced. A
file named on its own must hold the old text (FS_EDIT_NO_MATCH); a file a glob
found without it is left alone and listed in skipped. The result lists each
file with its replacements, sha256 and, by default, its diff's counts (--diff
full gives each file's unified diff). For different changes in several files,
patch takes one diff.`,
		Example: `  dsh-fs edit src/main.go --old 'retries := 3' --new 'retries := 5'
  dsh-fs edit README.md --old 'v1' --new 'v2' --replace-all
  dsh-fs edit src/main.go --old 'x := 1' --new 'x := 2' --line 40
  dsh-fs edit 'src/**/*.go' --old 'oldName(' --new 'newName(' --replace-all
  dsh-fs edit src/a.go --old-file /tmp/old.txt --new-file - <<'EOF'
  	if err != nil {
  		return fmt.Errorf("open: %w", err)
  	}
  EOF
  dsh-fs edit src/a.go --edits - <<'EOF'
  [{"old": "foo()", "new": "bar()"}, {"old": "x := 1", "new": "x := 2"}]
  EOF`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Path = policyFlagsOf(c), args[0]
			if len(args) > 1 || request.IsGlob(args[0]) {
				opts.Path, opts.Paths = "", args
				// The same change in each file: its counts, as patch
				// gives them, unless --diff asks for more.
				if !c.Flags().Changed(flagDiff) {
					opts.Diff = string(diff.FormSummary)
				}
			}
			opts.Old = givenString(c, "old", &oldText)
			opts.New = givenString(c, "new", &newText)
			opts.OldFile = givenString(c, "old-file", &oldFile)
			opts.NewFile = givenString(c, "new-file", &newFile)
			opts.IfMatchContent = givenString(c, flagIfMatchContent, &given)
			if runF != nil {
				return runF(opts)
			}
			return editRun(opts)
		},
	}
	c.Flags().StringVar(&oldText, "old", "", "the exact text to replace")
	c.Flags().StringVar(&newText, "new", "", "the text to put in its place")
	c.Flags().StringVar(&oldFile, "old-file", "", "read the old text from this file, byte for byte, or - for stdin")
	c.Flags().StringVar(&newFile, "new-file", "", "read the new text from this file, byte for byte, or - for stdin")
	c.Flags().BoolVar(&opts.ReplaceAll, "replace-all", false, "replace every occurrence")
	c.Flags().IntVar(&opts.Occurrence, "occurrence", 0, "replace only the Nth match of the old text (from 1)")
	c.Flags().IntVar(&opts.Line, "line", 0, "replace only the match that starts on line N")
	c.Flags().StringVar(&opts.Edits, "edits", "", `a JSON array of {"old","new","replace_all"} in a file, or - for stdin`)
	addMutationFlags(c.Flags(), "edit", &opts.Mutation)
	addIfMatchContent(c.Flags(), &given)
	// Each text has one source, and --edits carries its own.
	c.MarkFlagsMutuallyExclusive("old", "old-file")
	c.MarkFlagsMutuallyExclusive("new", "new-file")
	c.MarkFlagsMutuallyExclusive("occurrence", "line", "replace-all")
	for _, f := range []string{"old", "new", "old-file", "new-file", "replace-all", "occurrence", "line"} {
		c.MarkFlagsMutuallyExclusive("edits", f)
	}
	return c
}

func editRun(opts *EditOptions) error {
	var call *call
	var x *request.Exec
	var err error
	if opts.Paths != nil {
		// Several files: the header names them as given.
		if call, err = opts.App.beginWith(opts.Policy, request.OpEdit, strings.Join(opts.Paths, " ")); err == nil {
			x = call.x
		}
	} else {
		call, x, err = opts.App.beginRequest(opts.Policy, request.OpEdit, opts.Path)
	}
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	if opts.Mutation.IfMatchContent, err = call.givenBack("edit", opts.IfMatchContent, opts.IfMatch); err != nil {
		return err
	}
	edits, err := opts.edits(call)
	if err != nil {
		return err
	}
	req := request.Edit{Path: opts.Path, Paths: opts.Paths, Edits: edits, Mutation: opts.Mutation}
	if call.forwarded {
		return call.forward(wire.Request{Op: wire.OpEdit, Edit: &req})
	}
	res, err := x.Run(req)
	if err != nil {
		return err
	}
	return call.print(res)
}

// check refuses, before any text is read, what edit cannot take: a
// --diff it does not know; without --edits, a missing old or new text, or
// both read from standard input. Cobra has refused the flags that
// exclude each other.
func (opts *EditOptions) check() error {
	if _, err := request.ParseDiff(request.OpEdit, opts.Diff); err != nil {
		return err
	}
	edits := opts.Edits
	if err := checkGivenBack("edit", opts.IfMatchContent, namedSource{"old-file", opts.OldFile}, namedSource{"new-file", opts.NewFile}, namedSource{"edits", &edits}); err != nil {
		return err
	}
	if opts.Edits != "" {
		return nil
	}
	if (opts.Old == nil && opts.OldFile == nil) || (opts.New == nil && opts.NewFile == nil) {
		return fserr.New(fserr.InvalidArgument, "edit: give --old or --old-file, and --new or --new-file; or --edits")
	}
	if isStdin(opts.OldFile) && isStdin(opts.NewFile) {
		return fserr.New(fserr.InvalidArgument, "edit: --old-file and --new-file cannot both be - (standard input)")
	}
	return nil
}

// edits gathers the edits from --old/--old-file and --new/--new-file, or
// from --edits, as check let them through.
func (opts *EditOptions) edits(call *call) ([]fsops.Replacement, error) {
	if opts.Edits == "" {
		old, err := opts.text(call, "old", opts.Old, opts.OldFile)
		if err != nil {
			return nil, err
		}
		new, err := opts.text(call, "new", opts.New, opts.NewFile)
		if err != nil {
			return nil, err
		}
		return []fsops.Replacement{{Old: old, New: new, ReplaceAll: opts.ReplaceAll, Occurrence: opts.Occurrence, Line: opts.Line}}, nil
	}
	data, err := opts.readSource(call, "edits", opts.Edits)
	if err != nil {
		return nil, err
	}
	var edits []fsops.Replacement
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&edits); err != nil {
		return nil, fserr.Wrap(fserr.InvalidArgument, `edit: --edits: want a JSON array of {"old","new","replace_all"}: `+err.Error(), err)
	}
	if dec.More() {
		return nil, fserr.New(fserr.InvalidArgument, "edit: --edits: unexpected data after the JSON array")
	}
	return edits, nil
}

// text is the old or new text (which): the content of the file its
// -file flag names if given, else the flag's value (cobra lets only one
// be given, and check made sure one is).
func (opts *EditOptions) text(call *call, which string, value, file *string) (string, error) {
	if file == nil {
		return *value, nil
	}
	data, err := opts.readSource(call, which+"-file", *file)
	return string(data), err
}

// givenString is the value of c's string flag name, read into value, if
// the command line gave it; nil if it did not.
func givenString(c *cobra.Command, name string, value *string) *string {
	if !c.Flags().Changed(name) {
		return nil
	}
	return value
}

// isStdin says a source flag was given as "-", standard input.
func isStdin(name *string) bool { return name != nil && *name == "-" }

// readSource reads the whole of the file a flag names, or stdin for "-".
// The file is a read like any other: deny_read applies, and it must be a
// regular file.
func (opts *EditOptions) readSource(call *call, flag, name string) ([]byte, error) {
	if name == "" {
		return nil, fserr.New(fserr.InvalidArgument, "edit: --"+flag+" needs a file name, or - for stdin")
	}
	return call.readSource(opts.App.Stdin, "edit", "--"+flag, name)
}
