package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// PatchOptions are the inputs of patch.
type PatchOptions struct {
	App *invocation
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	From    string
	IfMatch []string
	DryRun  bool
	// Diff is --diff, the form of the diff, checked once the call began.
	Diff string
}

// NewCmdPatch returns the patch command; runF replaces patchRun in tests.
func NewCmdPatch(app *invocation, runF func(*PatchOptions) error) *cobra.Command {
	opts := &PatchOptions{App: app}
	c := &cobra.Command{
		Use:        "patch --from FILE|-",
		SuggestFor: []string{"apply", "apply_patch", "git-apply"},
		Short:      "Apply a multi-file patch, unified diff or apply_patch, all or nothing",
		Long: `patch applies a patch to many files at once, all or nothing: every hunk is
placed and every new content staged beside its file before the first one is
renamed into place, so a hunk that does not apply, a denied path, a stale
file or a full disk changes nothing. It reads the patch from --from FILE, or
standard input with --from -.

Two formats: a unified diff as git diff writes it (a/ and b/ prefixes,
/dev/null, new and deleted files, renames, "\ No newline at end of file"),
each hunk placed at its line numbers with its context checked exactly, an
offset allowed, no fuzz; or Codex's apply_patch format (*** Begin Patch,
*** Add File:, *** Delete File:, *** Update File:, *** Move to:, @@ hunks,
*** End of File), each hunk searched forward from the previous one, "@@ text"
seeking that line first. Matching is exact; line endings, a BOM and the
encoding are kept. --if-match PATH=SHA256 pins a file to what was read.

The result names each file with what was done, its sha256 and, by
default, its diff's counts (--diff summary); --diff full gives each
file's unified diff.`,
		Example: `  git diff | dsh-fs patch --from -
  dsh-fs patch --from - <<'EOF'
  *** Begin Patch
  *** Update File: src/main.go
  @@ func main() {
  -	retries := 3
  +	retries := 5
  *** Add File: NOTES.md
  +retries raised to 5
  *** End Patch
  EOF
  dsh-fs patch --from fix.diff --dry-run --diff full`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy = policyFlagsOf(c)
			if runF != nil {
				return runF(opts)
			}
			return patchRun(opts)
		},
	}
	c.Flags().StringVar(&opts.From, "from", "", "read the patch from this file, or - for standard input")
	c.Flags().StringArrayVar(&opts.IfMatch, "if-match", nil, "PATH=SHA256: patch PATH only if its current content has this SHA-256 (repeatable)")
	// Each file's counts by default: the diffs are what the model wrote,
	// echoed back (kilobytes for a rename); --diff full gives them.
	addDiffFlagsFrom(c.Flags(), &opts.DryRun, &opts.Diff, diff.FormSummary)
	return c
}

// check refuses, before the patch is read, what patch cannot take: a
// --diff it does not know, an --if-match that is not PATH=SHA256, no
// --from. It returns the pins by path.
func (opts *PatchOptions) check() (ifMatch map[string]string, err error) {
	if _, err := request.ParseDiff(request.OpPatch, opts.Diff); err != nil {
		return nil, err
	}
	ifMatch = map[string]string{}
	for _, pin := range opts.IfMatch {
		path, sum, ok := strings.Cut(pin, "=")
		if !ok || path == "" {
			return nil, fserr.New(fserr.InvalidArgument, "patch: --if-match "+pin+": want PATH=SHA256")
		}
		ifMatch[path] = sum
	}
	if opts.From == "" {
		e := fserr.New(fserr.InvalidArgument, "patch: give --from FILE, or --from - to read the patch from standard input")
		e.Hint = "git diff | dsh-fs patch --from -"
		return nil, e
	}
	return ifMatch, nil
}

func patchRun(opts *PatchOptions) error {
	call, err := opts.App.beginWith(opts.Policy, request.OpPatch, "")
	if err != nil {
		return err
	}
	ifMatch, err := opts.check()
	if err != nil {
		return err
	}
	data, err := opts.readPatch(call)
	if err != nil {
		return err
	}
	req := request.Patch{Patch: data, IfMatch: ifMatch, DryRun: opts.DryRun, Diff: opts.Diff}
	if call.forwarded {
		// Inside a session an escalated patch is the supervisor's to
		// carry out, with the patch as this call read it; one that
		// cannot parse is refused here.
		if err := req.Check(); err != nil {
			return err
		}
		return call.forward(wire.Request{Op: wire.OpPatch, Patch: &req})
	}
	res, err := req.Run(call.x)
	if err != nil {
		return err
	}
	return call.print(res)
}

// readPatch reads the patch --from names: a file, read as any read is
// (deny_read applies), or standard input for "-".
func (opts *PatchOptions) readPatch(call *call) ([]byte, error) {
	return call.readSource(opts.App.Stdin, "patch", "--from", opts.From)
}
