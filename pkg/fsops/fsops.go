// Package fsops runs dsh-fs's file operations in the calling process,
// under a policy loaded by github.com/dshfs/dsh-fs/pkg/sandbox: read,
// write, edit, patch, list, stat, grep, find, mkdir, move and remove, each
// one call through the same fence and the same typed request as the
// dsh-fs command's, with the same result (the fields of the command's
// JSON result, less its header) and the same error codes (sandbox.Code).
//
// Each function is one call: it resolves its path(s) once from the
// sandbox's workspace root, decides on what it opened beneath a writable
// root, never follows a symlink out of it, and refuses with an error whose
// sandbox.Code is FS_SANDBOX_DENIED and whose message is the command's.
// Grep and Find never open or list what deny_read hides. A failure
// leaves nothing behind: a write or an edit replaces its file atomically
// or not at all. No function restricts the calling process: the kernel
// layer is sandbox.Sandbox.RestrictProcess's alone.
//
// No call escalates: a denial is final, in the mode the Sandbox was
// opened with. Who may grant an escalation is the trusted approval
// setting's to say (docs/design.md §7), and the program that embeds this
// package is not among them: what it says of the policy is a session
// source, which may narrow the policy and never widen it
// (sandbox.Options), and an approver it passed in would be a session
// source that widens. A program that needs one call in a wider mode runs
// it as the dsh-fs command with --escalate, where the trusted approval
// decides.
package fsops

import (
	"github.com/dshfs/dsh-fs/pkg/diff"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// ReadOptions choose a window of lines. The zero value reads from the
// first line within the policy's read_max_lines and read_max_bytes.
type ReadOptions struct {
	// Offset is the first line, counted from 1; 0 is 1.
	Offset int
	// Limit is the most lines returned; 0 is read_max_lines.
	Limit int
	// MaxBytes bounds the content returned; 0 is read_max_bytes.
	MaxBytes int
}

// ReadResult is a window of a text file.
type ReadResult struct {
	Content string `json:"content"`
	// StartLine and EndLine are the window's first and last line, both 0
	// when it holds none.
	StartLine  int `json:"start_line"`
	EndLine    int `json:"end_line"`
	TotalLines int `json:"total_lines"`
	// Truncated says the file goes on after EndLine, or that CutLine was
	// cut at the byte budget.
	Truncated bool `json:"truncated"`
	// NextOffset is the Offset that continues the read; 0 at the end.
	NextOffset int `json:"next_offset,omitempty"`
	// CutLine is the line cut off because it alone was longer than the
	// byte budget.
	CutLine int `json:"cut_line,omitempty"`
	// PastEnd says Offset is after the last line.
	PastEnd bool  `json:"past_end,omitempty"`
	Size    int64 `json:"size"`
	// SHA256 is the hash of the whole file, for WriteOptions.IfMatch and
	// EditOptions.IfMatch.
	SHA256      string `json:"sha256"`
	Encoding    string `json:"encoding"`
	LineEndings string `json:"line_endings"`
}

// Read reads a window of the text file at path. A binary file is
// FS_BINARY, a path under deny_read FS_SANDBOX_DENIED.
func Read(sb *sandbox.Sandbox, path string, opt *ReadOptions) (*ReadResult, error) {
	if opt == nil {
		opt = &ReadOptions{}
	}
	return read(sb, path, *opt)
}

// WriteOptions are a write's options. The zero value creates a new file
// only: an existing one is FS_EXISTS unless Overwrite or IfMatch says to
// replace it.
type WriteOptions struct {
	// Mkdir makes the missing parent folders, each inside the fence.
	Mkdir bool
	// Overwrite replaces an existing file unseen.
	Overwrite bool
	// IfMatch replaces the file only while its content has this SHA-256
	// (hex, as ReadResult.SHA256 gives it); otherwise FS_STALE.
	IfMatch string
	// DryRun computes the result and its diff and writes nothing.
	DryRun bool
}

// WriteResult is what a write did.
type WriteResult struct {
	Created bool   `json:"created"`
	Bytes   int64  `json:"bytes"`
	SHA256  string `json:"sha256"`
	// PreviousSHA256 is the replaced content's hash, when it was read.
	PreviousSHA256 string `json:"previous_sha256,omitempty"`
	// HardlinkBroken says the old file had other hard links, which keep
	// the old content.
	HardlinkBroken bool        `json:"hardlink_broken,omitempty"`
	Encoding       string      `json:"encoding,omitempty"`
	DryRun         bool        `json:"dry_run,omitempty"`
	Diff           diff.Result `json:"diff"`
}

// Write replaces the file at path with content atomically: a reader sees
// the old file or the new one, and a failure leaves the old one as it
// was. Writing through a symlink writes its target and keeps the link.
func Write(sb *sandbox.Sandbox, path string, content []byte, opt *WriteOptions) (*WriteResult, error) {
	if opt == nil {
		opt = &WriteOptions{}
	}
	return write(sb, path, content, *opt)
}

// Replacement is one exact text to replace.
type Replacement struct {
	Old string `json:"old"`
	New string `json:"new"`
	// ReplaceAll replaces every match; otherwise Old must match once
	// (FS_EDIT_AMBIGUOUS, FS_EDIT_NO_MATCH).
	ReplaceAll bool `json:"replace_all,omitempty"`
	// Occurrence picks the Nth match (from 1); Line the match that starts
	// on that line (from 1). 0 picks none.
	Occurrence int `json:"occurrence,omitempty"`
	Line       int `json:"line,omitempty"`
}

// EditOptions are an edit's options.
type EditOptions struct {
	// IfMatch edits the file only while its content has this SHA-256.
	IfMatch string
	// DryRun computes the result and its diff and writes nothing.
	DryRun bool
}

// EditResult is what an edit did.
type EditResult struct {
	Replacements   int         `json:"replacements"`
	SHA256         string      `json:"sha256"`
	PreviousSHA256 string      `json:"previous_sha256"`
	LineEndings    string      `json:"line_endings"`
	Encoding       string      `json:"encoding"`
	DryRun         bool        `json:"dry_run,omitempty"`
	Diff           diff.Result `json:"diff"`
	// Warnings say what the edit did that its caller may not have meant.
	Warnings []string `json:"warnings,omitempty"`
}

// Edit replaces exact texts in the file at path, in order, all or
// nothing, keeping its encoding and line endings.
func Edit(sb *sandbox.Sandbox, path string, edits []Replacement, opt *EditOptions) (*EditResult, error) {
	if opt == nil {
		opt = &EditOptions{}
	}
	return edit(sb, path, edits, *opt)
}

// PatchOptions are a patch's options.
type PatchOptions struct {
	// IfMatch maps a file, as the patch names it, to the SHA-256 its
	// content must have; otherwise FS_STALE and nothing is applied.
	IfMatch map[string]string
	// DryRun places every hunk and changes nothing.
	DryRun bool
}

// PatchResult is what a patch did, file by file.
type PatchResult struct {
	// Format is the patch's: unified or apply_patch.
	Format string        `json:"format"`
	Files  []PatchedFile `json:"files"`
	DryRun bool          `json:"dry_run,omitempty"`
}

// PatchedFile is one file of a patch. Path is where the file is now (for
// a deleted file, where it was), From where a moved file was; SHA256 is
// its new content's hash (none for a deleted file), PreviousSHA256 its
// old content's (none for a created file). Diff is a summary: the counts
// of the lines the patch itself names.
type PatchedFile struct {
	Path           string      `json:"path"`
	Action         string      `json:"action"`
	From           string      `json:"from,omitempty"`
	SHA256         string      `json:"sha256,omitempty"`
	PreviousSHA256 string      `json:"previous_sha256,omitempty"`
	Hunks          int         `json:"hunks"`
	Diff           diff.Result `json:"diff"`
}

// Patch applies a multi-file patch, a unified diff (git's included) or an
// apply_patch envelope, all or nothing: every file it names is resolved
// through the fence and every hunk placed before any file changes, and a
// hunk that cannot be placed is FS_EDIT_NO_MATCH with the closest region.
// Paths in it are taken from the sandbox's workspace root.
func Patch(sb *sandbox.Sandbox, patch []byte, opt *PatchOptions) (*PatchResult, error) {
	if opt == nil {
		opt = &PatchOptions{}
	}
	return applyPatch(sb, patch, *opt)
}

// ListOptions are a listing's options. The zero value lists the folder's
// own entries, dot files left out, at most 1000.
type ListOptions struct {
	// All includes entries whose names start with a dot.
	All bool
	// Recursive lists the folders beneath too, to Depth levels (1 is the
	// folder's own entries; 0 is no bound).
	Recursive bool
	Depth     int
	// Limit is the most entries returned; 0 is 1000.
	Limit int
}

// Entry is one entry of a listing.
type Entry struct {
	// Name is the path relative to the listed folder ("src/main.go").
	Name string `json:"name"`
	// Type is file, dir, symlink or other.
	Type  string `json:"type,omitempty"`
	Size  int64  `json:"size"`
	Perm  string `json:"perm,omitempty"`
	Mtime string `json:"mtime,omitempty"`
	// Target is what a symlink points to, as stored in the link.
	Target string `json:"target,omitempty"`
	// Error says why the entry could not be described, or, for a folder,
	// listed; the listing goes on without it.
	Error *EntryError `json:"error,omitempty"`
}

// EntryError is what went wrong with one entry of a listing.
type EntryError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ListResult is a listing, sorted by name, each folder's entries followed
// by their own when recursive.
type ListResult struct {
	Entries   []Entry `json:"entries"`
	Total     int     `json:"total"`
	Truncated bool    `json:"truncated"`
	// Hidden counts the entries left out because they are under
	// deny_read.
	Hidden int `json:"hidden,omitempty"`
}

// List lists the folder at path, never through a symlink, leaving out
// what deny_read hides.
func List(sb *sandbox.Sandbox, path string, opt *ListOptions) (*ListResult, error) {
	if opt == nil {
		opt = &ListOptions{}
	}
	return list(sb, path, *opt)
}

// StatResult describes a path, and whether a mutation of it would pass
// the policy.
type StatResult struct {
	Exists bool   `json:"exists"`
	Type   string `json:"type,omitempty"`
	Size   int64  `json:"size"`
	Perm   string `json:"perm,omitempty"`
	Mtime  string `json:"mtime,omitempty"`
	Target string `json:"target,omitempty"`
	// Writable says a mutation of the path would pass the policy;
	// WritableReason says why not.
	Writable       bool   `json:"writable"`
	WritableReason string `json:"writable_reason,omitempty"`
	// Shell and WayForward are what the command adds inside a dsh-fs
	// exec session; empty here.
	Shell      string `json:"shell,omitempty"`
	WayForward string `json:"way_forward,omitempty"`
}

// Stat describes path without following a final symlink. A missing path
// is no error (Exists false).
func Stat(sb *sandbox.Sandbox, path string) (*StatResult, error) {
	return stat(sb, path)
}

// MkdirOptions are a mkdir's options.
type MkdirOptions struct {
	// Parents makes the missing folders above it too.
	Parents bool
	// DryRun decides and makes nothing.
	DryRun bool
}

// MkdirResult is what a mkdir did.
type MkdirResult struct {
	// Created says the folder was not there before.
	Created bool `json:"created"`
	DryRun  bool `json:"dry_run,omitempty"`
}

// Mkdir makes the folder at path. A folder already there is no error
// (Created false); anything else there, a symlink included, is FS_EXISTS.
func Mkdir(sb *sandbox.Sandbox, path string, opt *MkdirOptions) (*MkdirResult, error) {
	if opt == nil {
		opt = &MkdirOptions{}
	}
	return mkdir(sb, path, *opt)
}

// MoveResult is what a move did.
type MoveResult struct {
	Destination         string `json:"destination"`
	DestinationResolved string `json:"destination_resolved"`
	// Type is what was moved: file, dir, symlink or other.
	Type   string `json:"type"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// Move renames the file, symlink (as a link) or folder src to dst, which
// must not exist: it never replaces.
func Move(sb *sandbox.Sandbox, src, dst string) (*MoveResult, error) {
	return move(sb, src, dst)
}

// RemoveResult is what a remove did.
type RemoveResult struct {
	// Type is what was removed: file, dir, symlink or other.
	Type   string `json:"type"`
	DryRun bool   `json:"dry_run,omitempty"`
}

// Remove removes the file, the symlink (never what it names) or the empty
// folder at path: never recursive (a folder that holds anything is
// FS_IS_DIR).
func Remove(sb *sandbox.Sandbox, path string) (*RemoveResult, error) {
	return remove(sb, path)
}
