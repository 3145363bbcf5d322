package fsops

import "github.com/dshfs/dsh-fs/pkg/sandbox"

// GrepOptions are a search's options, the flags of dsh-fs grep. The zero
// value matches an RE2 regular expression, case-sensitive, with no
// context, skipping .git and what .gitignore and .ignore exclude, and
// shows at most 200 matches in 64 KiB of JSON, each line cut at 512
// bytes.
type GrepOptions struct {
	// Fixed takes the pattern as a literal string (--fixed).
	Fixed bool
	// IgnoreCase matches letters of either case (--ignore-case).
	IgnoreCase bool
	// Context is how many lines before and after each match are shown
	// (--context).
	Context int
	// Files lists the files that match instead of the matches (--files);
	// Count lists them with how many lines match (--count). Not both.
	Files bool
	Count bool
	// Globs keep the files whose path, relative to the searched folder,
	// matches one of them ("**" spans folders; a glob with no "/" matches
	// the base name); "!GLOB" leaves out the files and folders it
	// matches (--glob).
	Globs []string
	// NoIgnore also searches .git and what .gitignore and .ignore files
	// exclude (--no-ignore).
	NoIgnore bool
	// Limit is the most matches (with Files or Count, files) shown; 0 is
	// 200 (--limit).
	Limit int
	// MaxBytes is the most bytes of JSON the shown matches may take; 0 is
	// 64 KiB (--max-bytes).
	MaxBytes int
	// MaxLineBytes is the longest line text shown, a longer line cut
	// around the match; 0 is 512 (--max-line-bytes).
	MaxLineBytes int
	// After continues after GrepResult.Cursor, from a truncated result of
	// the same search (--after).
	After string
}

// Match is one line that matches.
type Match struct {
	// Path names the file as the searched path was given, joined with
	// the file's path beneath it ("src/a.go").
	Path string `json:"path"`
	// Line is the line's number, from 1.
	Line int `json:"line"`
	// Column is the byte offset of the first match in the line, from 1.
	Column int `json:"column"`
	// Text is the line without its line break, cut around the match
	// (and marked "…") when longer than MaxLineBytes.
	Text string `json:"text"`
	// Before and After are the context lines, each cut as Text is.
	Before []string `json:"before,omitempty"`
	After  []string `json:"after,omitempty"`
	// Cut says Text was cut.
	Cut bool `json:"cut,omitempty"`
}

// FileMatch is a file that matches, with GrepOptions.Files or Count.
type FileMatch struct {
	Path string `json:"path"`
	// Count is how many lines match, with GrepOptions.Count.
	Count int `json:"count,omitempty"`
}

// Skipped counts what a search's walk left out, by reason.
type Skipped struct {
	// Binary files: a NUL byte or invalid UTF-8 in the first 8 KiB.
	Binary int `json:"binary"`
	// TooLarge files have a line longer than the search's bounded buffer
	// (16 MiB): they are searched up to that line.
	TooLarge int `json:"too_large"`
	// Symlink entries, never followed.
	Symlink int `json:"symlink"`
	// Ignored entries: .git, and what .gitignore and .ignore exclude.
	Ignored int `json:"ignored"`
	// Glob counts the files GrepOptions.Globs left out.
	Glob int `json:"glob"`
	// Unreadable entries: the OS refused them, or they changed while
	// walked.
	Unreadable int `json:"unreadable"`
}

// GrepResult is what a search found, sorted by path, then line: the same
// bytes for the same tree.
type GrepResult struct {
	// Matches are the matching lines (nil with Files or Count).
	Matches []Match `json:"matches,omitzero"`
	// Files are the matching files (only with Files or Count).
	Files []FileMatch `json:"files,omitzero"`
	// Total counts every match (with Files or Count, file) after the
	// cursor, shown or not: every file is searched.
	Total int `json:"total"`
	// Truncated says Limit or MaxBytes left some out; LeftOut counts
	// them, and Cursor, given to GrepOptions.After, continues after the
	// last one shown.
	Truncated     bool    `json:"truncated"`
	LeftOut       int     `json:"left_out,omitzero"`
	Cursor        string  `json:"cursor,omitempty"`
	FilesSearched int     `json:"files_searched"`
	FilesSkipped  Skipped `json:"files_skipped"`
	// Hidden counts the entries under deny_read, never opened.
	Hidden int `json:"hidden,omitempty"`
}

// Grep searches the files beneath each of paths (none is the workspace
// root, ".") for the lines that match pattern, an RE2 regular expression
// (Go's regexp syntax) matched within one line, or a literal string with
// Fixed, as dsh-fs grep does. The walk never follows a symlink, never
// opens an entry under deny_read (it counts it in Hidden), and opens each
// file by handle once the fence has judged its name, deciding again on
// what it opened. A path under deny_read is FS_SANDBOX_DENIED; a missing
// one FS_NOT_FOUND; a bad pattern, glob, cursor or bound
// FS_INVALID_ARGUMENT.
func Grep(sb *sandbox.Sandbox, pattern string, paths []string, opt *GrepOptions) (*GrepResult, error) {
	if opt == nil {
		opt = &GrepOptions{}
	}
	return grep(sb, pattern, paths, *opt)
}

// FindOptions are a find's options, the flags of dsh-fs find. The zero
// value lists entries of every type in path order, skipping .git and
// what .gitignore and .ignore exclude, at most 1000 in 64 KiB of JSON.
type FindOptions struct {
	// Type keeps the entries of one type: file, dir, symlink or other;
	// "" keeps all (--type).
	Type string
	// Sort orders the entries by name (the default), size, lines or
	// mtime: by size, lines and mtime largest and newest first; Reverse
	// turns any order round (--sort, --reverse). A sorted result has no
	// cursor.
	Sort    string
	Reverse bool
	// Lines counts the lines of each text file shown (--lines).
	Lines bool
	// NoIgnore also lists .git and what .gitignore and .ignore files
	// exclude (--no-ignore).
	NoIgnore bool
	// Limit is the most entries shown; 0 is 1000 (--limit).
	Limit int
	// MaxBytes is the most bytes of JSON the shown entries may take; 0 is
	// 64 KiB (--max-bytes).
	MaxBytes int
	// After continues after FindResult.Cursor, from a truncated result of
	// the same find (--after).
	After string
}

// Found is one entry a find found.
type Found struct {
	// Path names the entry as the searched folder was given, joined with
	// its path beneath it.
	Path string `json:"path"`
	// Type is file, dir, symlink or other.
	Type string `json:"type"`
	// Size is the entry's size in bytes (a symlink's is its text's).
	Size int64 `json:"size"`
	// Mtime is the entry's modification time, given when sorted by it.
	Mtime string `json:"mtime,omitempty"`
	// Lines is a text file's line count, with FindOptions.Lines; nil when
	// not counted, and then LinesSkipped says why (not_a_file, binary,
	// too_large, budget or unreadable).
	Lines        *int   `json:"lines,omitempty"`
	LinesSkipped string `json:"lines_skipped,omitempty"`
}

// FindResult is what a find found, sorted by path unless
// FindOptions.Sort says otherwise.
type FindResult struct {
	Entries []Found `json:"entries"`
	// Total counts every entry found after the cursor, shown or not.
	Total int `json:"total"`
	// Truncated says Limit or MaxBytes left some out; LeftOut counts
	// them, and Cursor, given to FindOptions.After, continues after the
	// last one shown.
	Truncated bool   `json:"truncated"`
	LeftOut   int    `json:"left_out,omitzero"`
	Cursor    string `json:"cursor,omitempty"`
	// Skipped counts what the walk left out, by reason (Binary, TooLarge
	// and Glob stay 0: find opens no file).
	Skipped Skipped `json:"skipped"`
	// Hidden counts the entries under deny_read, never looked at.
	Hidden int `json:"hidden,omitempty"`
}

// Find lists the entries beneath the folder path ("" is the workspace
// root) whose path relative to it matches glob ("**" spans folders; a
// glob with no "/" matches the base name at any depth), with their type
// and size, as dsh-fs find does. Symlinks are listed as symlinks, never
// followed; an entry under deny_read is never looked at (it counts in
// Hidden). A path under deny_read is FS_SANDBOX_DENIED; a file
// FS_NOT_DIR; a bad glob, type, order, cursor or bound
// FS_INVALID_ARGUMENT.
func Find(sb *sandbox.Sandbox, glob, path string, opt *FindOptions) (*FindResult, error) {
	if opt == nil {
		opt = &FindOptions{}
	}
	return find(sb, glob, path, *opt)
}
