package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// The official filesystem server's tools, under its names and arguments
// (docs/mcp.md), over the same fence and operations as the CLI.

// listLimit bounds a listing, a tree or a search of the drop-in tools,
// which have no limit argument; a longer one ends with a note.
const listLimit = 10000

// textResult is the structured content of the drop-in tools, as the
// official server's: {"content": TEXT}.
type textResult struct {
	Content string `json:"content"`
}

type pathArgs struct {
	Path string `json:"path"`
}

type readTextArgs struct {
	Path string `json:"path"`
	Head *int   `json:"head,omitempty" jsonschema:"If provided, returns only the first N lines of the file"`
	Tail *int   `json:"tail,omitempty" jsonschema:"If provided, returns only the last N lines of the file"`
}

func (m *server) readTextFile(_ context.Context, req *mcp.CallToolRequest, in readTextArgs) (*mcp.CallToolResult, textResult, error) {
	if in.Head != nil && in.Tail != nil {
		return fail(fserr.New(fserr.InvalidArgument, "Cannot specify both head and tail parameters simultaneously"))
	}
	content, err := m.readText(req.Session, in.Path, in.Head, in.Tail)
	if err != nil {
		return fail(err)
	}
	return text(content)
}

// readText reads path whole, its first head lines or its last tail
// lines, within read_max_bytes; a cut is said in a note at the end.
func (m *server) readText(ss *mcp.ServerSession, path string, head, tail *int) (string, error) {
	x, _, err := m.begin(ss, path)
	if err != nil {
		return "", err
	}
	r := request.Read{Path: path, Offset: 1, Limit: ptr(math.MaxInt32)}
	switch {
	case head != nil:
		if *head < 1 {
			return "", fserr.New(fserr.InvalidArgument, "head must be 1 or more")
		}
		r.Limit = head
	case tail != nil:
		if *tail < 1 {
			return "", fserr.New(fserr.InvalidArgument, "tail must be 1 or more")
		}
		// The line count first: the window is the last tail lines.
		first, err := request.Read{Path: path, Offset: 1, Limit: ptr(1), MaxBytes: 1}.Run(x)
		if err != nil {
			return "", err
		}
		r.Offset, r.Limit = max(1, first.TotalLines-*tail+1), tail
	}
	res, err := r.Run(x)
	if err != nil {
		return "", err
	}
	content := res.Content
	if res.Truncated && (head == nil || res.EndLine < *head) && (tail == nil || res.NextOffset != 0) {
		content += fmt.Sprintf("\n[dsh-fs: cut at read_max_bytes (%d bytes) after line %d of %d; dsh_read with offset %d gives the rest]",
			m.settings.ReadMaxBytes, res.EndLine, res.TotalLines, res.NextOffset)
	}
	return content, nil
}

// mediaMaxBytes bounds read_media_file: the file is held in memory
// and sent base64-encoded in one message.
const mediaMaxBytes = 16 << 20

// mediaTypes are the official server's MIME types by extension.
var mediaTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
	".bmp": "image/bmp", ".svg": "image/svg+xml", ".mp3": "audio/mpeg", ".wav": "audio/wav", ".ogg": "audio/ogg",
	".flac": "audio/flac",
}

// cappedBuffer holds at most limit bytes and fails past them.
type cappedBuffer struct {
	buf   []byte
	limit int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if len(c.buf)+len(p) > c.limit {
		return 0, errTooLarge
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}

var errTooLarge = errors.New("too large")

func (m *server) readMediaFile(_ context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
	x, t, err := m.begin(req.Session, in.Path)
	if err != nil {
		return nil, nil, toolError(err)
	}
	buf := &cappedBuffer{limit: mediaMaxBytes}
	if _, err := (request.Read{Path: in.Path}).Stream(x, buf); err != nil {
		if errors.Is(err, errTooLarge) {
			err = fserr.New(fserr.TooLarge, fmt.Sprintf("read_media_file: %s: larger than %d bytes", in.Path, mediaMaxBytes))
		}
		return nil, nil, toolError(err)
	}
	mime, ok := mediaTypes[strings.ToLower(filepath.Ext(t.Path))]
	if !ok {
		mime = "application/octet-stream"
	}
	var c mcp.Content
	switch {
	case strings.HasPrefix(mime, "image/"):
		c = &mcp.ImageContent{Data: buf.buf, MIMEType: mime}
	case strings.HasPrefix(mime, "audio/"):
		c = &mcp.AudioContent{Data: buf.buf, MIMEType: mime}
	default:
		c = &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: fileURI(t.Path), MIMEType: mime, Blob: buf.buf}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{c}}, nil, nil
}

// fileURI is the file: URI of the absolute path p, as Node's
// url.pathToFileURL makes it for the official server: each byte other
// than an ASCII letter, a digit, "/" and !$&'()*+,-.:;=@_ percent-encoded
// ("my café.bin" is my%20caf%C3%A9.bin). A name that is not UTF-8 keeps
// its bytes, encoded, where Node would have replaced them.
func fileURI(p string) string {
	const hex = "0123456789ABCDEF"
	b := []byte("file://")
	for i := 0; i < len(p); i++ {
		c := p[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/!$&'()*+,-.:;=@_", c) >= 0 {
			b = append(b, c)
			continue
		}
		b = append(b, '%', hex[c>>4], hex[c&15])
	}
	return string(b)
}

type readMultipleArgs struct {
	Paths []string `json:"paths" jsonschema:"Array of file paths to read. Each path must be a string pointing to a valid file within allowed directories."`
}

func (m *server) readMultipleFiles(_ context.Context, req *mcp.CallToolRequest, in readMultipleArgs) (*mcp.CallToolResult, textResult, error) {
	// An empty list is refused by the schema (minItems 1).
	parts := make([]string, len(in.Paths))
	for i, p := range in.Paths {
		content, err := m.readText(req.Session, p, nil, nil)
		if err != nil {
			msg := err.Error()
			var de *policy.DeniedError
			if errors.As(err, &de) {
				msg += " " + de.Marker()
			}
			parts[i] = fmt.Sprintf("%s: Error - %s (%s)", p, msg, fserr.CodeOf(err))
			continue
		}
		parts[i] = p + ":\n" + content + "\n"
	}
	return text(strings.Join(parts, "\n---\n"))
}

type writeFileArgs struct {
	Path     string `json:"path"`
	Content  string `json:"content"`
	Escalate string `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) writeFile(_ context.Context, req *mcp.CallToolRequest, in writeFileArgs) (*mcp.CallToolResult, textResult, error) {
	w := request.Write{Path: in.Path, Content: []byte(in.Content), Overwrite: true, Mutation: request.Mutation{Diff: string(diff.FormSummary)}}
	o := m.mutate(req, in.Path, escalateArgs{To: in.Escalate}, w, nil)
	if o.ask != nil {
		return o.ask, textResult{}, nil
	}
	if o.err != nil {
		return fail(o.err)
	}
	return text("Successfully wrote to " + in.Path)
}

type editOp struct {
	OldText string `json:"oldText" jsonschema:"Text to search for - must match exactly, once"`
	NewText string `json:"newText" jsonschema:"Text to replace with"`
}

type editFileArgs struct {
	Path     string   `json:"path"`
	Edits    []editOp `json:"edits"`
	DryRun   bool     `json:"dryRun,omitempty" jsonschema:"Preview changes using git-style diff format"`
	Escalate string   `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) editFile(_ context.Context, req *mcp.CallToolRequest, in editFileArgs) (*mcp.CallToolResult, textResult, error) {
	var edits []fsops.Replacement
	for _, e := range in.Edits {
		edits = append(edits, fsops.Replacement{Old: e.OldText, New: e.NewText})
	}
	edits, path, err := m.dropUnchanged(req, in.Path, edits)
	if err != nil {
		return fail(err)
	}
	if len(edits) == 0 && len(in.Edits) > 0 {
		// Every edit's new text is its old: the official server's empty
		// diff, and nothing written.
		return text(editedText(diff.Result{}, path))
	}
	e := request.Edit{Path: in.Path, Edits: edits, Mutation: request.Mutation{DryRun: in.DryRun, Diff: string(diff.FormFull)}}
	o := m.mutate(req, in.Path, escalateArgs{To: in.Escalate}, e, nil)
	if o.ask != nil {
		return o.ask, textResult{}, nil
	}
	res, _ := o.res.(*fsops.EditResult)
	err = o.err
	if o.handedOver && err == nil {
		res = &fsops.EditResult{}
		err = json.Unmarshal(o.line, res)
	}
	if err != nil {
		return fail(err)
	}
	return text(editedText(res.Diff, o.t.Path))
}

// dropUnchanged returns the edits without those whose new text is their
// old, which the official server applies as changing nothing, and the
// file's canonical path. Each of those must still find its old text once
// in the file as it is, as any edit's must: a dry run that would delete
// it says so, on the same fence as the edit. An edit that changes
// nothing needs no escalation, so it is never asked for.
func (m *server) dropUnchanged(req *mcp.CallToolRequest, path string, edits []fsops.Replacement) ([]fsops.Replacement, string, error) {
	var kept []fsops.Replacement
	canonical := path
	for _, e := range edits {
		if e.Old != e.New || e.Old == "" {
			kept = append(kept, e)
			continue
		}
		check := request.Edit{Path: path, Edits: []fsops.Replacement{{Old: e.Old}}, Mutation: request.Mutation{DryRun: true, Diff: string(diff.FormSummary)}}
		o := m.mutate(req, path, escalateArgs{}, check, nil)
		if o.err != nil {
			return nil, "", o.err
		}
		canonical = o.t.Path
	}
	return kept, canonical, nil
}

// officialDiffHeader is the head of the official server's edit_file diff
// of path: jsdiff's createTwoFilesPatch, with its "original" and
// "modified" labels.
func officialDiffHeader(path string) string {
	return "Index: " + path + "\n" + strings.Repeat("=", 67) + "\n--- " + path + "\toriginal\n+++ " + path + "\tmodified\n"
}

// editedText is edit_file's text for a diff of path: the unified diff,
// under the official server's header in place of git's "--- a/…", in a
// fence long enough for its content, and a note when it is not whole. An
// edit that changes nothing has the header alone, as the official
// server's.
func editedText(d diff.Result, path string) string {
	t := d.Text
	if t != "" && !strings.HasSuffix(t, "\n") {
		t += "\n"
	}
	if old, rest, ok := strings.Cut(t, "\n"); ok && strings.HasPrefix(old, "--- ") && strings.HasPrefix(rest, "+++ ") {
		_, t, _ = strings.Cut(rest, "\n")
	}
	t = officialDiffHeader(result.OSPath(path)) + t
	fence := "```"
	for strings.Contains(t, fence) {
		fence += "`"
	}
	out := fence + "diff\n" + t + fence + "\n\n"
	switch {
	case d.Omitted != "":
		// Nothing was compared, so nothing is counted.
		out += "[dsh-fs: diff left out (" + omittedWhy(d.Omitted) + "); the edit was made]\n"
	case d.Truncated:
		out += fmt.Sprintf("[dsh-fs: diff truncated at diff_max_bytes; +%d -%d lines]\n", d.Added, d.Removed)
	}
	return out
}

// omittedWhy says why a diff was left out (diff.Result.Omitted).
func omittedWhy(reason string) string {
	switch reason {
	case diff.ReasonBasisTooLarge:
		return "the file is larger than diff_basis_max_bytes"
	case diff.ReasonBinary:
		return "the content is binary"
	}
	return reason
}

type mkdirArgs struct {
	Path     string `json:"path"`
	Escalate string `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) createDirectory(_ context.Context, req *mcp.CallToolRequest, in mkdirArgs) (*mcp.CallToolResult, textResult, error) {
	x, _, err := m.beginMutation(req.Session, in.Path, escalateArgs{To: in.Escalate}, false)
	if err != nil {
		return fail(err)
	}
	// The escalate argument is put to the fence as for a write; it is
	// refused whatever approval says (Approver.GrantRefusal): no escalated
	// path here carries it out.
	if _, err := (request.Mkdir{Path: in.Path, Parents: true}).Run(x); err != nil {
		return fail(err)
	}
	return text("Successfully created directory " + in.Path)
}

type moveArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Escalate    string `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) moveFile(_ context.Context, req *mcp.CallToolRequest, in moveArgs) (*mcp.CallToolResult, textResult, error) {
	x, _, err := m.beginMutation(req.Session, in.Source, escalateArgs{To: in.Escalate}, false)
	if err != nil {
		return fail(err)
	}
	// As create_directory's: the fence puts the escalate argument to
	// its approver, which refuses it (Approver.GrantRefusal).
	if _, err := (request.Move{Source: in.Source, Destination: in.Destination}).Run(x); err != nil {
		return fail(err)
	}
	return text("Successfully moved " + in.Source + " to " + in.Destination)
}

// countLimit bounds the walk that counts a tree over listLimit.
const countLimit = 10 * listLimit

// list lists the folder path, every name included. A recursive listing
// cut at listLimit stops reading folders, so its Total is a lower bound:
// the tree is then walked again to count it (up to countLimit), so that
// the note says how many entries there are.
func (m *server) list(ss *mcp.ServerSession, path string, recursive bool) (*fsops.ListResult, error) {
	x, _, err := m.begin(ss, path)
	if err != nil {
		return nil, err
	}
	res, err := request.List{Path: path, All: true, Recursive: recursive, Limit: listLimit}.Run(x)
	if err != nil || !res.Truncated || !recursive {
		return res, err
	}
	all, err := request.List{Path: path, All: true, Recursive: true, Limit: countLimit}.Run(x)
	if err == nil {
		res.Total = all.Total
		if all.Truncated {
			res.Total = -all.Total // more than that: listNote says so
		}
	}
	return res, nil
}

func listNote(res *fsops.ListResult) string {
	if !res.Truncated {
		return ""
	}
	total := fmt.Sprint(res.Total)
	if res.Total < 0 {
		total = fmt.Sprintf("more than %d", -res.Total)
	}
	return fmt.Sprintf("\n[dsh-fs: %d of %s entries shown; dsh_ls pages through the rest]", len(res.Entries), total)
}

func isDir(e fsops.Entry) bool { return e.Type == fsops.TypeDir }

func (m *server) listDirectory(_ context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, textResult, error) {
	res, err := m.list(req.Session, in.Path, false)
	if err != nil {
		return fail(err)
	}
	lines := make([]string, 0, len(res.Entries))
	for _, e := range res.Entries {
		lines = append(lines, dirPrefix(e)+" "+e.Name)
	}
	return text(strings.Join(lines, "\n") + listNote(res))
}

func dirPrefix(e fsops.Entry) string {
	if isDir(e) {
		return "[DIR]"
	}
	return "[FILE]"
}

type listSizesArgs struct {
	Path   string `json:"path"`
	SortBy string `json:"sortBy,omitempty" jsonschema:"Sort entries by name or size"`
}

func (m *server) listDirectoryWithSizes(_ context.Context, req *mcp.CallToolRequest, in listSizesArgs) (*mcp.CallToolResult, textResult, error) {
	if in.SortBy != "" && in.SortBy != "name" && in.SortBy != "size" {
		return fail(fserr.New(fserr.InvalidArgument, `sortBy must be "name" or "size"`))
	}
	res, err := m.list(req.Session, in.Path, false)
	if err != nil {
		return fail(err)
	}
	entries := res.Entries
	if in.SortBy == "size" {
		entries = slices.Clone(entries)
		slices.SortStableFunc(entries, func(a, b fsops.Entry) int { return int(b.Size - a.Size) })
	}
	var lines []string
	var files, dirs int
	var total int64
	for _, e := range entries {
		size := ""
		if isDir(e) {
			dirs++
		} else {
			files++
			total += e.Size
			size = fmt.Sprintf("%10s", formatSize(e.Size))
		}
		lines = append(lines, fmt.Sprintf("%s %-30s %s", dirPrefix(e), e.Name, size))
	}
	lines = append(lines, "", fmt.Sprintf("Total: %d files, %d directories", files, dirs), "Combined size: "+formatSize(total))
	return text(strings.Join(lines, "\n") + listNote(res))
}

// formatSize says a size as the official server does: "0 B", "512 B",
// "1.50 KB".
func formatSize(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	if n <= 0 {
		return "0 B"
	}
	i := int(math.Floor(math.Log(float64(n)) / math.Log(1024)))
	i = min(i, len(units)-1)
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.2f %s", float64(n)/math.Pow(1024, float64(i)), units[i])
}

type treeArgs struct {
	Path            string   `json:"path"`
	ExcludePatterns []string `json:"excludePatterns,omitempty"`
}

type treeEntry struct {
	Name     string       `json:"name"`
	Type     string       `json:"type"`
	Children *[]treeEntry `json:"children,omitempty"`
}

func (m *server) directoryTree(_ context.Context, req *mcp.CallToolRequest, in treeArgs) (*mcp.CallToolResult, textResult, error) {
	for _, p := range in.ExcludePatterns {
		if !doublestar.ValidatePattern(p) {
			return fail(fserr.New(fserr.InvalidArgument, fmt.Sprintf("excludePatterns: %q: not a valid glob", p)))
		}
	}
	res, err := m.list(req.Session, in.Path, true)
	if err != nil {
		return fail(err)
	}
	root := []treeEntry{}
	// Entries come sorted, each folder before its own entries; a folder's
	// children slice is found again by its relative path.
	children := map[string]*[]treeEntry{".": &root}
	for _, e := range res.Entries {
		if excluded(e.Name, in.ExcludePatterns) {
			continue
		}
		parent, ok := children[filepath.Dir(e.Name)]
		if !ok {
			continue // beneath an excluded folder
		}
		te := treeEntry{Name: filepath.Base(e.Name), Type: "file"}
		if isDir(e) {
			te.Type = "directory"
			te.Children = &[]treeEntry{}
		}
		*parent = append(*parent, te)
		if te.Children != nil {
			children[e.Name] = (*parent)[len(*parent)-1].Children
		}
	}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		return fail(err)
	}
	return text(string(out) + listNote(res))
}

// excluded matches rel against the patterns as the official server does:
// a pattern with a "*" matches the whole relative path; one without also
// matches at any depth and everything beneath it. Dot names count.
func excluded(rel string, patterns []string) bool {
	for _, p := range patterns {
		if match(p, rel) {
			return true
		}
		if !strings.Contains(p, "*") && (match("**/"+p, rel) || match("**/"+p+"/**", rel)) {
			return true
		}
	}
	return false
}

func match(pattern, name string) bool {
	ok, _ := doublestar.Match(pattern, name)
	return ok
}

type searchArgs struct {
	Path            string   `json:"path"`
	Pattern         string   `json:"pattern"`
	ExcludePatterns []string `json:"excludePatterns,omitempty"`
}

func (m *server) searchFiles(_ context.Context, req *mcp.CallToolRequest, in searchArgs) (*mcp.CallToolResult, textResult, error) {
	x, t, err := m.begin(req.Session, in.Path)
	if err != nil {
		return fail(err)
	}
	globs := []string{}
	for _, p := range in.ExcludePatterns {
		globs = append(globs, "!"+p)
	}
	// Searched by its canonical path, so what is found is named by full
	// paths, as the official server names them.
	res, err := request.Find{Glob: in.Pattern, Path: t.Path, Limit: listLimit, MaxBytes: 16 << 20,
		Walk: request.Walk{NoIgnore: true, Globs: globs}}.Run(x)
	if err != nil {
		return fail(err)
	}
	if len(res.Entries) == 0 {
		return text("No matches found")
	}
	lines := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		lines[i] = result.OSPath(e.Path)
	}
	out := strings.Join(lines, "\n")
	if res.Truncated {
		out += fmt.Sprintf("\n[dsh-fs: %d of %d matches shown; narrow the pattern]", len(res.Entries), res.Total)
	}
	return text(out)
}

func (m *server) getFileInfo(_ context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, textResult, error) {
	x, _, err := m.begin(req.Session, in.Path)
	if err != nil {
		return fail(err)
	}
	res, err := request.Stat{Path: in.Path}.Run(x)
	if err != nil {
		return fail(err)
	}
	if !res.Exists {
		return fail(fserr.New(fserr.NotFound, "get_file_info: "+in.Path+": no such file or folder"))
	}
	perm := strings.TrimPrefix(res.Perm, "0")
	lines := []string{
		fmt.Sprintf("size: %d", res.Size),
		"modified: " + res.Mtime,
		fmt.Sprintf("isDirectory: %t", res.Type == fsops.TypeDir),
		fmt.Sprintf("isFile: %t", res.Type == fsops.TypeFile),
		"permissions: " + perm,
		"type: " + res.Type,
	}
	if res.Target != "" {
		lines = append(lines, "target: "+res.Target)
	}
	lines = append(lines, fmt.Sprintf("writable: %t", res.Writable))
	if res.WritableReason != "" {
		lines = append(lines, "writableReason: "+res.WritableReason)
	}
	return text(strings.Join(lines, "\n"))
}

func (m *server) listAllowedDirectories(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, textResult, error) {
	allowed := m.allowed
	if within := m.roots.within(req.Session); within != nil {
		allowed = sandbox.Intersect(allowed, within)
	}
	shown := make([]string, len(allowed))
	for i, a := range allowed {
		shown[i] = result.OSPath(a)
	}
	return text("Allowed directories:\n" + strings.Join(shown, "\n"))
}
