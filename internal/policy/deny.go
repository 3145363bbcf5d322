package policy

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
)

// The reasons of a denial. They are API: scripts match on them.
const (
	ReasonReadOnly     = "read-only mode"
	ReasonOutsideRoots = "outside writable roots"
	ReasonProtected    = "protected path"
	ReasonBareRepo     = "would complete a bare repository"
	ReasonDenyRead     = "deny_read"
	ReasonEscaped      = "resolution escaped the root"
	ReasonLandlock     = "refused by landlock"
	ReasonAboveMaxMode = "above max_mode"
	// ReasonSessionWiden: a flag, variable, session config file or the
	// working directory asked for more than the trusted policy allows.
	ReasonSessionWiden = "session cannot widen the policy"
	// ReasonWorkspaceTooBroad: the session cwd is /, the home folder or
	// a system tree, which no session may make writable.
	ReasonWorkspaceTooBroad = "workspace too broad"
	// ReasonOutsideWorkspaces: the session cwd is not among the trusted
	// workspaces.
	ReasonOutsideWorkspaces = "outside workspaces"
	// ReasonTmpdirNotAllowed: $TMPDIR lies outside /tmp and the allowed
	// roots; it is not a writable root.
	ReasonTmpdirNotAllowed = "TMPDIR outside the allowed roots"
	// ReasonNotApproved: an escalation was asked for and its approver
	// refused it, or there was no approver to ask.
	ReasonNotApproved = "escalation not approved"
	// ReasonOutsideAllowed: a read of dsh-fs mcp outside its allowed
	// folders (Policy.ReadWithin).
	ReasonOutsideAllowed = "outside the allowed folders"
	// ReasonSessionRecord: DSH_FS_SESSION names a record the session
	// could have written, or no record at all; the call does not run.
	ReasonSessionRecord = "session record not trusted"
	// ReasonOutsideClientRoots: a writable root is not wholly inside the roots
	// the MCP client offered; what lies beneath one of them stays writable.
	ReasonOutsideClientRoots = "outside the client's roots"
	reasonMarkerPattern      = "[sandbox: file access denied under %s mode]"
)

// DeniedError is a sandbox denial: FS_SANDBOX_DENIED, exit status 3.
type DeniedError struct {
	// Op is the operation that was denied ("write", "read", …).
	Op string
	// Path is the path as given.
	Path string
	// Resolved is the path as resolved, and Workspace the workspace
	// root (the session cwd, when it is a writable root): a denial
	// outside the writable roots names both, so a model that slipped
	// out of its folder sees where it is meant to write.
	Resolved  string
	Workspace string
	// Base is the folder a relative Path was taken from: the shell's
	// current folder in a session, else the session cwd.
	Base string
	// Mode is the effective mode under which the call was denied.
	Mode Mode
	// Reason is one of the Reason constants.
	Reason string
	// Matched is what the path matched, when that helps: the protected or
	// deny_read glob, or the protected path.
	Matched string
	// WritableRoots are the canonical writable roots, so a model can
	// recover without guessing.
	WritableRoots []string
	// Needed is the narrowest mode that would allow the call, or "" when
	// no mode would (deny_read).
	Needed Mode
	// MaxMode and Approval shape the escalation hint.
	MaxMode  Mode
	Approval Approval
	// Refusal says why an escalation that was asked for was not granted.
	Refusal string
	// Cause is the reason of the denial an escalation failed to lift,
	// when Reason is ReasonNotApproved.
	Cause string
	// Final, when set, says why no escalation can lift the denial: the
	// call would change no path where it was refused, so there is none
	// to show an approver. Hint is then empty.
	Final string
}

// Code returns FS_SANDBOX_DENIED.
func (e *DeniedError) Code() fserr.Code { return fserr.SandboxDenied }

func (e *DeniedError) Error() string {
	msg := e.Op + ": "
	if e.Path != "" {
		msg += e.Path + ": "
	}
	if e.Reason == ReasonDenyRead {
		// Said as what it is, so that a model neither retries with
		// --escalate nor takes the file for missing.
		return msg + "withheld by policy (" + ReasonDenyRead + " " + e.Matched + "); no escalation reads it"
	}
	if e.Reason == ReasonOutsideRoots && e.Workspace != "" && e.Resolved != "" {
		msg += e.Resolved + " is outside the workspace root " + e.Workspace
		if len(e.WritableRoots) > 1 {
			msg += " and the other writable roots"
		}
	} else {
		msg += e.Reason
		if details := nonEmpty(e.Cause, e.Matched); len(details) > 0 {
			msg += " (" + strings.Join(details, ": ") + ")"
		}
	}
	if e.Refusal != "" {
		msg += "; " + e.Refusal
	}
	return msg
}

// Marker is the text models recognise as a sandbox denial.
func (e *DeniedError) Marker() string { return Marker(e.Mode) }

// Marker returns "[sandbox: file access denied under <mode> mode]".
func Marker(m Mode) string { return fmt.Sprintf(reasonMarkerPattern, m) }

// WorkspaceHint says, for a relative path taken from a folder other
// than the workspace root that led outside the writable roots, that it
// was taken from that folder: the wrong-folder slip of a shell that ran
// cd. Empty otherwise.
func (e *DeniedError) WorkspaceHint() string {
	if e.Reason != ReasonOutsideRoots || e.Workspace == "" || e.Path == "" || filepath.IsAbs(e.Path) ||
		e.Base == "" || e.Base == e.Workspace {
		return ""
	}
	return "a relative path is taken from the current folder (" + e.Base + "), not from the workspace root: name the file beneath " + e.Workspace + " or give its absolute path"
}

// Hint tells the model how to retry: once, with --escalate and a person's
// approval, or not at all. Empty when no mode would allow the call.
func (e *DeniedError) Hint() string {
	switch {
	case e.Needed == "", e.Final != "":
		return ""
	case e.Refusal != "":
		// Asking again would be refused again: a model must not loop.
		return fmt.Sprintf("the escalation was refused (%s): do not retry; ask the user to allow %s", e.Refusal, e.Needed)
	case e.Needed.Wider(e.MaxMode):
		return fmt.Sprintf("this needs %s, above this deployment's max_mode %s: ask the user to change the policy", e.Needed, e.MaxMode)
	case e.Approval == ApprovalNever:
		return fmt.Sprintf("this needs %s, and escalation is disabled here (approval: never): ask the user to change the policy", e.Needed)
	case e.Approval == ApprovalTrust:
		return fmt.Sprintf("if the user agrees, retry this one call with --escalate %s", e.Needed)
	case e.Approval == ApprovalTTY:
		return fmt.Sprintf("retry this one call with --escalate %s; a person at the terminal must approve it", e.Needed)
	case e.Approval == ApprovalCommand:
		return fmt.Sprintf("retry this one call with --escalate %s; the harness's approver decides", e.Needed)
	}
	return fmt.Sprintf("this needs %s: under a dsh-fs exec session, retry this one call with --escalate %s and the person at its terminal decides; elsewhere ask the user to change the policy", e.Needed, e.Needed)
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// DenialsFolder is the folder of a session's denial log beside its
// record (internal/denials keeps the log there).
const DenialsFolder = "denials"
