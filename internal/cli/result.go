package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Header opens every result: ok, op, path (as given), resolved (canonical)
// and the effective mode, in this order.
type Header struct {
	OK        bool   `json:"ok"`
	Op        string `json:"op"`
	Path      string `json:"path"`
	Resolved  string `json:"resolved"`
	Mode      string `json:"mode"`
	Escalated bool   `json:"escalated,omitempty"`
}

// Failure is the result of a failed call, for every front end.
type Failure struct {
	Header
	Error      errorBody       `json:"error"`
	Marker     string          `json:"marker,omitempty"`
	Escalation *escalationBody `json:"escalation,omitempty"`
}

type errorBody struct {
	Code          fserr.Code `json:"code"`
	Message       string     `json:"message"`
	Mode          string     `json:"mode,omitempty"`
	Reason        string     `json:"reason,omitempty"`
	Matched       string     `json:"matched,omitempty"`
	WritableRoots []string   `json:"writable_roots,omitempty"`
	Detail        any        `json:"detail,omitempty"`
	Hint          string     `json:"hint,omitempty"`
}

type escalationBody struct {
	Mode string `json:"mode"`
	Hint string `json:"hint"`
}

// NewFailure renders err for the call described by h.
func NewFailure(h Header, err error) Failure {
	h.OK = false
	f := Failure{Header: h, Error: errorBody{Code: fserr.CodeOf(err), Message: err.Error()}}
	var fe *fserr.Error
	if errors.As(err, &fe) {
		f.Error.Detail, f.Error.Hint = fe.Detail, fe.Hint
	}
	var de *sandbox.DeniedError
	if errors.As(err, &de) {
		f.Mode = string(de.Mode)
		f.Error.Mode = string(de.Mode)
		f.Error.Reason = de.Reason
		f.Error.Matched = de.Matched
		f.Error.WritableRoots = de.WritableRoots
		f.Marker = de.Marker()
		if hint := de.Hint(); hint != "" {
			f.Escalation = &escalationBody{Mode: string(de.Needed), Hint: hint}
		}
		if de.Reason == sandbox.ReasonDenyRead && f.Error.Hint == "" {
			// No escalation lifts it: say what does, and what the
			// shell meets there, so the model neither loops nor guesses.
			f.Error.Hint = "no escalation lifts deny_read (" + de.Matched + "); in a dsh-fs exec session the shell finds it empty (the mount layer hides it). If the task needs it, ask the user to remove that entry from deny_read in their trusted config"
		}
	}
	return f
}

// encodeJSON writes v as one line, or indented for a person at a terminal.
// HTML escaping is off: agents read "<" and "&" in code as they are.
func encodeJSON(w io.Writer, v any, pretty bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if pretty {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
