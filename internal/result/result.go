// Package result renders what a call of dsh-fs gives back, for every front
// end: the header every result opens with, a success as one JSON object, a
// failure (the denial with its marker and the way forward), the text form
// for people (--output text) and the text of an MCP tool error. The front
// ends only choose the form; none renders a result of its own.
package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/policy"
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
	Error      ErrorBody       `json:"error"`
	Marker     string          `json:"marker,omitempty"`
	Escalation *EscalationBody `json:"escalation,omitempty"`
	// refused says an escalation was asked for and refused: only then
	// does an MCP client's text name the escalation hint (ToolText).
	refused bool
}

// ErrorBody is a failure's error: its stable code, its message and, for
// a denial, the rule that denied it.
type ErrorBody struct {
	Code          fserr.Code `json:"code"`
	Message       string     `json:"message"`
	Mode          string     `json:"mode,omitempty"`
	Reason        string     `json:"reason,omitempty"`
	Matched       string     `json:"matched,omitempty"`
	WritableRoots []string   `json:"writable_roots,omitempty"`
	// WorkspaceRoot is the workspace root, for a denial outside the
	// writable roots: where the model is meant to write.
	WorkspaceRoot string `json:"workspace_root,omitempty"`
	Detail        any    `json:"detail,omitempty"`
	Hint          string `json:"hint,omitempty"`
}

// EscalationBody is the way forward of a denial an escalation could
// lift: the mode it needs and what to do.
type EscalationBody struct {
	Mode string `json:"mode"`
	Hint string `json:"hint"`
}

// NewFailure renders err for the call described by h.
func NewFailure(h Header, err error) Failure {
	h.OK = false
	f := Failure{Header: h, Error: ErrorBody{Code: fserr.CodeOf(err), Message: err.Error()}}
	var fe *fserr.Error
	if errors.As(err, &fe) {
		f.Error.Detail, f.Error.Hint = fe.Detail, fe.Hint
	}
	var de *policy.DeniedError
	if errors.As(err, &de) {
		f.Mode = string(de.Mode)
		f.Error.Mode = string(de.Mode)
		f.Error.Reason = de.Reason
		f.Error.Matched = de.Matched
		f.Error.WritableRoots = de.WritableRoots
		if de.Reason == policy.ReasonOutsideRoots {
			f.Error.WorkspaceRoot = de.Workspace
		}
		if h := de.WorkspaceHint(); h != "" && f.Error.Hint == "" {
			f.Error.Hint = h
		}
		f.Marker = de.Marker()
		f.refused = de.Refusal != ""
		if hint := de.Hint(); hint != "" {
			f.Escalation = &EscalationBody{Mode: string(de.Needed), Hint: hint}
		}
		if de.Final != "" && f.Error.Hint == "" {
			f.Error.Hint = de.Final
		}
		if de.Reason == policy.ReasonDenyRead && f.Error.Hint == "" {
			// No escalation lifts it: say what does, and what the
			// shell meets there, so the model neither loops nor guesses.
			// The mount layer hides what existed when the session
			// started; a file made since is not hidden from the shell.
			f.Error.Hint = "no escalation lifts deny_read (" + de.Matched + "); in a dsh-fs exec session the shell finds it empty where it existed when the session started (the mount layer hides what was there then; a file created during the session is not hidden from the shell). If the task needs it, ask the user to remove that entry from deny_read in their trusted config"
		}
	}
	return osSpelledFailure(f)
}

// osSpelledFailure is f with its paths as the OS spells them (osPath):
// the failure leaves the fence here, for every front end. Its detail is
// left as it is: the front ends switch on its type.
func osSpelledFailure(f Failure) Failure {
	if !osSpelled() {
		return f
	}
	f.Path, f.Resolved = osPath(f.Path), osPath(f.Resolved)
	f.Error.Message, f.Error.Hint = osPathsIn(f.Error.Message), osPathsIn(f.Error.Hint)
	f.Error.Matched, f.Error.WorkspaceRoot = osPath(f.Error.Matched), osPath(f.Error.WorkspaceRoot)
	f.Error.WritableRoots = osPaths(f.Error.WritableRoots)
	f.Marker = osPathsIn(f.Marker)
	if f.Escalation != nil {
		e := *f.Escalation
		e.Hint = osPathsIn(e.Hint)
		f.Escalation = &e
	}
	return f
}

// DecodeFailure reads the failure result line of a call run in another
// process (an escalated call over MCP). What its JSON does not carry is
// taken from the reason: a call refused there was refused its escalation.
func DecodeFailure(line []byte) (Failure, error) {
	var f Failure
	err := json.Unmarshal(line, &f)
	f.refused = f.Error.Reason == policy.ReasonNotApproved
	return f, err
}

// JSON is a success result as one JSON object: the header followed by
// result's own fields, keys in a fixed order.
func JSON(h Header, result any) (json.RawMessage, error) {
	var head, body bytes.Buffer
	if err := Encode(&head, h, false); err != nil {
		return nil, err
	}
	if err := Encode(&body, result, false); err != nil {
		return nil, err
	}
	out := bytes.TrimSpace(head.Bytes())
	if obj := bytes.TrimSpace(body.Bytes()); len(obj) > 2 {
		out = append(append(out[:len(out)-1], ','), obj[1:]...)
	}
	return json.RawMessage(osPathsJSON(out)), nil
}

// Encode writes v as one line, or indented for a person at a terminal.
// HTML escaping is off: agents read "<" and "&" in code as they are.
func Encode(w io.Writer, v any, pretty bool) error {
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
