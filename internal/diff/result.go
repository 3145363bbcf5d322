package diff

import (
	"bytes"
	"encoding/json"
)

// Reasons a diff is omitted. They are part of the JSON API: new ones may be
// added, existing ones are never renamed.
const (
	// ReasonBasisTooLarge: a side is larger than Options.BasisMaxBytes, or
	// the caller streamed it and never held it.
	ReasonBasisTooLarge = "basis_too_large"
	// ReasonBinary: a side is not UTF-8 text (text.IsBinary).
	ReasonBinary = "binary"
)

// Result is the "diff" object of a write or edit result, in one of four
// JSON shapes, keys in this order (docs/design.md §6): computed
// {"added","removed","text","truncated" when true}, summary
// {"added","removed","summary":true}, omitted {"omitted":"binary"} or
// "basis_too_large" (no counts: they are unknown), and no change
// {"added":0,"removed":0,"text":""}. Added and Removed count the whole
// diff's lines even when Text is truncated; with Omitted set the other
// fields are zero.
type Result struct {
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
	// Summary says Text was left out on purpose; the counts are exact.
	Summary bool   `json:"summary,omitempty"`
	Omitted string `json:"omitted,omitempty"`
}

// summary is r without its text, unless r was omitted.
func (r Result) summary() Result {
	if r.Omitted != "" {
		return r
	}
	return Result{Added: r.Added, Removed: r.Removed, Summary: true}
}

// Omitted returns the result of a diff that was not computed, for reason
// (ReasonBasisTooLarge or ReasonBinary). Callers that streamed a large input
// and never held it use it; it carries no counts.
func Omitted(reason string) Result { return Result{Omitted: reason} }

// computedJSON, summaryJSON and omittedJSON are the wire shapes of
// Result; separate types rather than omitempty on Result, because
// "added":0 must stay in a computed result and must not appear in an
// omitted one.
type computedJSON struct {
	Added     int    `json:"added"`
	Removed   int    `json:"removed"`
	Text      string `json:"text"`
	Truncated bool   `json:"truncated,omitempty"`
}

type omittedJSON struct {
	Omitted string `json:"omitted"`
}

type summaryJSON struct {
	Added   int  `json:"added"`
	Removed int  `json:"removed"`
	Summary bool `json:"summary"`
}

// MarshalJSON writes r in one of the shapes documented on Result. It does
// not escape '<', '>' and '&' (code is full of them, and the result is not
// HTML); an enclosing encoder that does escape HTML still will.
func (r Result) MarshalJSON() ([]byte, error) {
	var v any = computedJSON{r.Added, r.Removed, r.Text, r.Truncated}
	switch {
	case r.Omitted != "":
		v = omittedJSON{r.Omitted}
	case r.Summary:
		v = summaryJSON{r.Added, r.Removed, true}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
