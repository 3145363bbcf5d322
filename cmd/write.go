package cmd

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/pkg/diff"
	"github.com/dshfs/dsh-fs/pkg/fserr"
	"github.com/dshfs/dsh-fs/pkg/fsops"
)

// WriteOptions are the inputs of write.
type WriteOptions struct {
	App     *App
	Command *cobra.Command

	Path     string
	Content  string
	From     string
	Mkdir    bool
	IfMatch  string
	DryRun   bool
	Encoding string
}

// NewCmdWrite returns the write command; runF replaces writeRun in tests.
func NewCmdWrite(app *App, runF func(*WriteOptions) error) *cobra.Command {
	opts := &WriteOptions{App: app}
	c := &cobra.Command{
		Use:   "write PATH",
		Short: "Replace a file atomically with new content and show the diff",
		Long: `write replaces PATH atomically with the content of --content, --from FILE,
or standard input: a temp file in the same folder, written, synced and renamed
over the target. A reader sees the old file or the new one; a failure leaves
the old file as it was.`,
		Example: `  dsh-fs write notes.md < draft.md
  dsh-fs write src/new.go --mkdir --content 'package main'
  dsh-fs write go.mod --from /tmp/go.mod --if-match <sha256 from read>`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command, opts.Path = c, args[0]
			if runF != nil {
				return runF(opts)
			}
			return writeRun(opts)
		},
	}
	c.Flags().StringVar(&opts.Content, "content", "", "the new content")
	c.Flags().StringVar(&opts.From, "from", "", "read the new content from this file")
	c.Flags().BoolVar(&opts.Mkdir, "mkdir", false, "create missing parent folders")
	c.Flags().StringVar(&opts.Encoding, "encoding", "", "write the UTF-8 content in this encoding, BOM included: utf-8, utf-8-bom, utf-16le, utf-16be, windows-1252, latin-1 (default: the bytes as given)")
	addMutationFlags(c.Flags(), "write", &opts.IfMatch, &opts.DryRun)
	return c
}

func writeRun(opts *WriteOptions) error {
	call, t, err := opts.App.beginPath(opts.Command, "write", opts.Path)
	if err != nil {
		return err
	}
	flags := opts.Command.Flags()
	if flags.Changed("content") && flags.Changed("from") {
		return fserr.New(fserr.InvalidArgument, "write: give --content or --from, not both")
	}
	if flags.Changed("from") && opts.From == "" {
		return fserr.New(fserr.InvalidArgument, "write: --from needs a file name")
	}
	var content io.Reader = opts.App.Stdin
	switch {
	case opts.Command.Flags().Changed("content"):
		content = strings.NewReader(opts.Content)
	case opts.From != "":
		// The source is a read like any other: deny_read applies to it,
		// and it must be a regular file.
		file, err := fsops.OpenSource(call.fence, "write --from", opts.From)
		if err != nil {
			return err
		}
		defer file.Close()
		content = file
	}
	res, err := fsops.Write(call.fence, t, fsops.WriteOptions{
		Content:  content,
		Mkdir:    opts.Mkdir,
		IfMatch:  opts.IfMatch,
		DryRun:   opts.DryRun,
		Diff:     call.diffOptions(),
		Encoding: opts.Encoding,
	})
	if err != nil {
		return err
	}
	return call.print(res)
}

// diffOptions are the diff bounds of the call's settings.
func (c *call) diffOptions() diff.Options {
	return diff.Options{
		Context:       c.settings.DiffContext,
		BasisMaxBytes: c.settings.DiffBasisMaxBytes,
		MaxBytes:      c.settings.DiffMaxBytes,
	}
}
