package cli

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// WriteOptions are the inputs of write.
type WriteOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	Path string
	// Content is --content, nil when not given (an empty one is an empty
	// file); From is --from, nil when not given: a file's name, or "-"
	// for standard input, which is read only when asked.
	Content *string
	From    *string
	Mkdir   bool
	// Mutation is --if-match, --dry-run and --diff.
	request.Mutation
	Overwrite bool
	Encoding  string
	// IfMatchContent is --if-match-content, nil when not given: a file's
	// name, or "-" for standard input.
	IfMatchContent *string
}

// NewCmdWrite returns the write command; runF replaces writeRun in tests.
func NewCmdWrite(app *invocation, runF func(*WriteOptions) error) *cobra.Command {
	opts := &WriteOptions{App: app}
	var content, from, given string
	c := &cobra.Command{
		Use:        "write PATH",
		SuggestFor: []string{"echo", "tee", "create", "put", "save"},
		Short:      "Replace a file atomically with new content and show the diff",
		Long: `write replaces PATH atomically with the content of --content TEXT, --from FILE,
or --from - (standard input, read only when asked): a temp file in the same
folder, written, synced and renamed over the target. A reader sees the old file
or the new one; a failure leaves the old file as it was.`,
		Example: `  dsh-fs write notes.md --from draft.md
  dsh-fs write notes.md --from - < draft.md
  dsh-fs write src/new.go --mkdir --content 'package main'
  dsh-fs write go.mod --from /tmp/go.mod --if-match <sha256 from read>`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy, opts.Path = policyFlagsOf(c), args[0]
			opts.Content = givenString(c, "content", &content)
			opts.From = givenString(c, "from", &from)
			opts.IfMatchContent = givenString(c, flagIfMatchContent, &given)
			if runF != nil {
				return runF(opts)
			}
			return writeRun(opts)
		},
	}
	c.Flags().StringVar(&content, "content", "", "the new content")
	c.Flags().StringVar(&from, "from", "", "read the new content from this file, or - for standard input")
	c.Flags().BoolVar(&opts.Mkdir, "mkdir", false, "create missing parent folders")
	c.Flags().BoolVar(&opts.Overwrite, "overwrite", false, "replace an existing file unseen; without it (or --if-match) an existing file is FS_EXISTS")
	c.Flags().StringVar(&opts.Encoding, "encoding", "", "write the UTF-8 content in this encoding, BOM included: utf-8, utf-8-bom, utf-16le, utf-16be, windows-1252, latin-1 (default: the bytes as given)")
	addMutationFlags(c.Flags(), "write", &opts.Mutation)
	addIfMatchContent(c.Flags(), &given)
	c.MarkFlagsMutuallyExclusive("content", "from")
	return c
}

// check refuses, before any content is read, what write cannot take: an
// empty --from, a --diff it does not know, no content at all. A nil
// error promises Content or From.
func (opts *WriteOptions) check() error {
	if opts.From != nil && *opts.From == "" {
		return fserr.New(fserr.InvalidArgument, "write: --from needs a file name")
	}
	if _, err := request.ParseDiff(request.OpWrite, opts.Diff); err != nil {
		return err
	}
	if opts.Content == nil && opts.From == nil {
		// Standard input is read only when asked: an empty or never-ending
		// stdin must neither empty the file nor hang the call.
		return fserr.New(fserr.InvalidArgument, "write: no content: give --content TEXT, --from FILE, or --from - to read standard input")
	}
	return checkGivenBack("write", opts.IfMatchContent, namedSource{"from", opts.From})
}

func writeRun(opts *WriteOptions) error {
	call, x, err := opts.App.beginRequest(opts.Policy, request.OpWrite, opts.Path)
	if err != nil {
		return err
	}
	if err := opts.check(); err != nil {
		return err
	}
	if opts.Mutation.IfMatchContent, err = call.givenBack("write", opts.IfMatchContent, opts.IfMatch); err != nil {
		return err
	}
	var content io.Reader
	switch {
	case opts.Content != nil:
		content = strings.NewReader(*opts.Content)
	case *opts.From == "-":
		content = opts.App.Stdin
	default:
		// The source is a read like any other: deny_read applies to it,
		// and it must be a regular file.
		file, err := fsops.OpenSource(call.fence, "write --from", *opts.From)
		if err != nil {
			return err
		}
		defer file.Close()
		content = file
	}
	req := request.Write{Path: opts.Path, Source: content, Mkdir: opts.Mkdir, Overwrite: opts.Overwrite, Encoding: opts.Encoding,
		Mutation: opts.Mutation}
	if call.forwarded {
		data, err := readForwarded("write", opts.Path, content)
		if err != nil {
			return err
		}
		req.Content, req.Source = data, nil
		return call.forward(wire.Request{Op: wire.OpWrite, Write: &req})
	}
	res, err := req.Run(x)
	if err != nil {
		return err
	}
	return call.print(res)
}
