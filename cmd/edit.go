package cmd

import (
	"bytes"
	"encoding/json"
	"io"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/fsops"
)

// EditOptions are the inputs of edit.
type EditOptions struct {
	App     *App
	Command *cobra.Command

	Path       string
	Old        string
	New        string
	ReplaceAll bool
	Edits      string
	IfMatch    string
	DryRun     bool
}

// NewCmdEdit returns the edit command; runF replaces editRun in tests.
func NewCmdEdit(app *App, runF func(*EditOptions) error) *cobra.Command {
	opts := &EditOptions{App: app}
	c := &cobra.Command{
		Use:        "edit PATH",
		SuggestFor: []string{"sed", "patch", "replace", "str_replace", "modify"},
		Short:      "Replace exact text in a file, once or everywhere, and show the diff",
		Long: `edit replaces --old with --new in PATH. The old text must occur exactly once
unless --replace-all; otherwise nothing changes and the error says where the
matches are, or which lines come closest. --edits FILE (or - for stdin) takes
a JSON array of {"old","new","replace_all"} applied in order, all or nothing.
Line endings (LF/CRLF) and a BOM are kept: type "\n" in a CRLF file.`,
		Example: `  dsh-fs edit src/main.go --old 'retries := 3' --new 'retries := 5'
  dsh-fs edit README.md --old 'v1' --new 'v2' --replace-all
  dsh-fs edit src/a.go --edits - <<'EOF'
  [{"old": "foo()", "new": "bar()"}, {"old": "x := 1", "new": "x := 2"}]
  EOF`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command, opts.Path = c, args[0]
			if runF != nil {
				return runF(opts)
			}
			return editRun(opts)
		},
	}
	c.Flags().StringVar(&opts.Old, "old", "", "the exact text to replace")
	c.Flags().StringVar(&opts.New, "new", "", "the text to put in its place")
	c.Flags().BoolVar(&opts.ReplaceAll, "replace-all", false, "replace every occurrence")
	c.Flags().StringVar(&opts.Edits, "edits", "", `a JSON array of {"old","new","replace_all"} in a file, or - for stdin`)
	addMutationFlags(c.Flags(), "edit", &opts.IfMatch, &opts.DryRun)
	return c
}

func editRun(opts *EditOptions) error {
	call, t, err := opts.App.beginPath(opts.Command, "edit", opts.Path)
	if err != nil {
		return err
	}
	diffOpts, err := call.diffOptions(opts.Command, "edit")
	if err != nil {
		return err
	}
	edits, err := opts.edits(call)
	if err != nil {
		return err
	}
	res, err := fsops.Edit(call.fence, t, fsops.EditOptions{
		Edits:   edits,
		IfMatch: opts.IfMatch,
		DryRun:  opts.DryRun,
		Diff:    diffOpts,
	})
	if err != nil {
		return err
	}
	return call.print(res)
}

// edits gathers the edits from --old/--new or from --edits.
func (opts *EditOptions) edits(call *call) ([]fsops.Replacement, error) {
	flags := opts.Command.Flags()
	if opts.Edits == "" {
		if !flags.Changed("old") || !flags.Changed("new") {
			return nil, fserr.New(fserr.InvalidArgument, "edit: give --old and --new, or --edits")
		}
		return []fsops.Replacement{{Old: opts.Old, New: opts.New, ReplaceAll: opts.ReplaceAll}}, nil
	}
	if flags.Changed("old") || flags.Changed("new") || opts.ReplaceAll {
		return nil, fserr.New(fserr.InvalidArgument, "edit: --edits replaces --old, --new and --replace-all")
	}
	var src io.Reader = opts.App.Stdin
	if opts.Edits != "-" {
		// The edits file is a read like any other: deny_read applies.
		file, err := fsops.OpenSource(call.fence, "edit --edits", opts.Edits)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		src = file
	}
	data, err := io.ReadAll(src)
	if err != nil {
		return nil, fserr.FromOS("edit: --edits", opts.Edits, err)
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
