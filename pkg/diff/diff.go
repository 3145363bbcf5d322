// Package diff is the bounded unified diff that dsh-fs's write, edit and
// patch report (docs/design.md §6), for a Go program that
// embeds dsh-fs (github.com/dshfs/dsh-fs/pkg/fsops) or wants the same
// diff of two contents: the hunks GNU diff -u prints, under "--- a/NAME"
// and "+++ b/NAME" headers, omitted with a reason when a side is too
// large or binary, cut at a byte limit.
package diff

// Reasons a diff is omitted (Result.Omitted). They are part of the JSON
// API: new ones may be added, none is renamed.
const (
	// ReasonBasisTooLarge: a side is larger than Options.BasisMaxBytes.
	ReasonBasisTooLarge = "basis_too_large"
	// ReasonBinary: a side is not UTF-8 text.
	ReasonBinary = "binary"
)

// Result is the "diff" of a write, an edit or a patch, as the dsh-fs
// command's JSON gives it. Added and Removed count the '+' and '-' lines
// of the whole diff, even when Text is truncated. Summary says Text was
// left out on purpose (a created file), the counts exact. When Omitted is
// set, the other fields are zero and meaningless.
type Result struct {
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
	Summary   bool   `json:"summary,omitempty"`
	Omitted   string `json:"omitted,omitempty"`
}

// MarshalJSON writes r in the command's shape: {"added","removed","text"}
// (with "truncated" when true), {"added","removed","summary":true}, or
// {"omitted":REASON}.
func (r Result) MarshalJSON() ([]byte, error) { return marshal(r) }

// Options bound a diff. The zero value bounds nothing and shows no
// context; the dsh-fs command's defaults are Context 3, BasisMaxBytes
// 1 MiB and MaxBytes 64 KiB (diff_context, diff_basis_max_bytes,
// diff_max_bytes).
type Options struct {
	// Context is the number of unchanged lines shown around each change.
	Context int
	// BasisMaxBytes omits the diff (ReasonBasisTooLarge) when either side
	// is larger; 0 or less is no limit.
	BasisMaxBytes int64
	// MaxBytes cuts the text at a line boundary to at most this many
	// bytes, headers included, and sets Truncated; 0 or less is no limit.
	MaxBytes int
}

// Unified returns the diff from old to new of the file name. It reads
// nothing and writes nothing: a pure function of its arguments.
func Unified(name string, old, new []byte, opt Options) Result {
	return unified(name, old, new, opt)
}
