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
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/approval"
	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// server holds what every tool call of dsh-fs mcp shares: the settings
// loaded once at start. Each call builds its own fence from them, so each
// re-checks its paths and acts through the confined handles, as a CLI
// call does.
type server struct {
	settings *config.Settings
	// allowed are the allowed folders, canonical: the DIR arguments, or
	// the cwd and the writable roots when none were given.
	allowed []string
	// roots are the client's, which narrow the allowed folders.
	roots *clientRoots
	// elsewhere runs the calls whose escalation the fence handed over;
	// nil when no escalation can be granted here, and noGrant says why.
	elsewhere *cli.Elsewhere
	noGrant   string
	// startElsewhere sets elsewhere and noGrant, once: at the first
	// mutating call. nil in read-only mode.
	startElsewhere func()
	// approvals are the escalations the client's user approved.
	approvals *clientApprovals
}

// listLimit bounds a listing, a tree or a search of the drop-in tools,
// which have no limit argument; a longer one ends with a note.
const listLimit = 10000

// textResult is the structured content of the drop-in tools, as the
// official server's: {"content": TEXT}.
type textResult struct {
	Content string `json:"content"`
}

// newServer registers the tools; in read-only mode no tool that
// mutates is registered at all.
func newServer(s *config.Settings, dirs []string) (*mcp.Server, *server) {
	m := &server{settings: s, roots: newClientRoots(), approvals: newClientApprovals()}
	p := s.Policy
	for _, d := range dirs {
		// Relative to the directory the harness started the server in,
		// as config took them.
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		if c, err := sandbox.Canonical(p.Cwd, d); err == nil && !slices.Contains(m.allowed, c) {
			m.allowed = append(m.allowed, c)
		}
	}
	if len(m.allowed) == 0 {
		m.allowed = []string{p.Cwd}
		for _, r := range p.WritableRoots {
			if c, err := sandbox.Canonical(p.Cwd, r); err == nil && !slices.Contains(m.allowed, c) {
				m.allowed = append(m.allowed, c)
			}
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "dsh-fs", Version: cli.BuildVersion().Version}, &mcp.ServerOptions{
		Instructions:            instructions(p, m.allowed),
		RootsListChangedHandler: m.roots.changed,
	})
	srv.AddReceivingMiddleware(settleProtocol)
	mutates := p.Mode != sandbox.ReadOnly
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true}

	read := &mcp.Tool{Name: "read_text_file", Title: "Read Text File", Annotations: readOnly,
		Description: "Read the contents of a file as text (decoded to UTF-8 whatever its encoding). Use 'head' for the first N lines or 'tail' for the last N, not both. " +
			"A file larger than read_max_bytes is cut there, with a note saying where; dsh_read pages through it."}
	addTool(srv, read, m.readTextFile)
	alias := *read
	alias.Name, alias.Title = "read_file", "Read File (Deprecated)"
	alias.Description = "Read the complete contents of a file as text. DEPRECATED: Use read_text_file instead."
	addTool(srv, &alias, m.readTextFile)
	addTool(srv, &mcp.Tool{Name: "read_media_file", Title: "Read Media File", Annotations: readOnly,
		Description: "Read an image or audio file (at most 16 MiB) and return it base64-encoded with its MIME type, as image or audio content; another type comes as an embedded blob."}, m.readMediaFile)
	addTool(srv, &mcp.Tool{Name: "read_multiple_files", Title: "Read Multiple Files", Annotations: readOnly,
		InputSchema: inputSchema[readMultipleArgs](map[string]func(*jsonschema.Schema){"paths": withMinItems(1)}),
		Description: "Read several files at once. Each file's content is returned with its path; a file that cannot be read gives its error in its place and the others are still returned."}, m.readMultipleFiles)
	addTool(srv, &mcp.Tool{Name: "list_directory", Title: "List Directory", Annotations: readOnly,
		Description: "List a folder's entries, each prefixed [DIR] or [FILE], sorted by name."}, m.listDirectory)
	addTool(srv, &mcp.Tool{Name: "list_directory_with_sizes", Title: "List Directory with Sizes", Annotations: readOnly,
		InputSchema: inputSchema[listSizesArgs](map[string]func(*jsonschema.Schema){"sortBy": func(p *jsonschema.Schema) { withEnum("name", "size")(p); withDefault(`"name"`)(p) }}),
		Description: "List a folder's entries with their sizes, each prefixed [DIR] or [FILE], sorted by name or size, with totals."}, m.listDirectoryWithSizes)
	addTool(srv, &mcp.Tool{Name: "directory_tree", Title: "Directory Tree", Annotations: readOnly,
		InputSchema: inputSchema[treeArgs](map[string]func(*jsonschema.Schema){"excludePatterns": withDefault(`[]`)}),
		Description: "A recursive tree of a folder as JSON (2-space indent): each entry has 'name', 'type' (file or directory) and, for a directory, 'children'. Symlinks are never followed."}, m.directoryTree)
	addTool(srv, &mcp.Tool{Name: "search_files", Title: "Search Files", Annotations: readOnly,
		InputSchema: inputSchema[searchArgs](map[string]func(*jsonschema.Schema){"excludePatterns": withDefault(`[]`)}),
		Description: "Find files and folders beneath a folder whose path relative to it matches a glob ('**/*.go'; a glob with no '/' matches the base name at any depth). Returns full paths, one per line."}, m.searchFiles)
	addTool(srv, &mcp.Tool{Name: "get_file_info", Title: "Get File Info", Annotations: readOnly,
		Description: "Describe a file or folder: size, modification time, type, permissions, and whether a write there would pass the policy. A symlink is described, not followed."}, m.getFileInfo)
	addTool(srv, &mcp.Tool{Name: "list_allowed_directories", Title: "List Allowed Directories", Annotations: readOnly,
		Description: "The folders this server was given: reads, listings and searches stay within them, and in workspace-write mode each is writable (dsh_policy shows it all)."}, m.listAllowedDirectories)
	if mutates {
		addTool(srv, &mcp.Tool{Name: "write_file", Title: "Write File",
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(true)},
			Description: "Create a file or replace one with new content, atomically (a reader sees the old file or the new one). Only inside the writable roots."}, m.writeFile)
		addTool(srv, &mcp.Tool{Name: "edit_file", Title: "Edit File",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
			InputSchema: inputSchema[editFileArgs](map[string]func(*jsonschema.Schema){"dryRun": withDefault(`false`)}),
			Description: "Replace exact text in a file and return a unified diff. Each oldText must occur exactly once (otherwise nothing changes and the error gives the lines of the matches, or the closest region); all edits apply or none. " +
				"Line endings (CRLF) and a BOM are kept: write \\n in oldText. dryRun previews the diff."}, m.editFile)
		// Destructive as the official one says: a move takes the source's
		// name away, whatever it does at the destination.
		addTool(srv, &mcp.Tool{Name: "move_file", Title: "Move File",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
			Description: "Move or rename a file or folder. The destination must not exist: a move never replaces. Both ends only inside the writable roots; a symlink is moved as a link."}, m.moveFile)
		addTool(srv, &mcp.Tool{Name: "create_directory", Title: "Create Directory",
			Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: ptr(false)},
			Description: "Create a folder and its missing parents; one that exists already is no error. Only inside the writable roots."}, m.createDirectory)
	}

	addTool(srv, &mcp.Tool{Name: "dsh_read", Title: "dsh-fs read", Annotations: readOnly,
		Description: "dsh-fs read: a window of a text file (offset, limit) with its sha256, encoding and line endings; the same JSON result as the CLI."}, m.dshRead)
	addTool(srv, &mcp.Tool{Name: "dsh_ls", Title: "dsh-fs ls", Annotations: readOnly,
		Description: "dsh-fs ls: list a folder (all, recursive, depth, limit); the same JSON result as the CLI."}, m.dshLs)
	addTool(srv, &mcp.Tool{Name: "dsh_stat", Title: "dsh-fs stat", Annotations: readOnly,
		Description: "dsh-fs stat: describe a path and say whether a write there would pass the policy (writable, writable_reason)."}, m.dshStat)
	addTool(srv, &mcp.Tool{Name: "dsh_policy", Title: "dsh-fs policy", Annotations: readOnly,
		Description: "dsh-fs policy: the effective policy, each setting's origin, the writable roots, the protected and deny_read globs."}, m.dshPolicy)
	if mutates {
		addTool(srv, &mcp.Tool{Name: "dsh_write", Title: "dsh-fs write",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
			Description: "dsh-fs write: replace a file atomically and return the diff. An existing file is replaced only with overwrite or if_match (its sha256 from dsh_read)."}, m.dshWrite)
		addTool(srv, &mcp.Tool{Name: "dsh_edit", Title: "dsh-fs edit",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
			Description: "dsh-fs edit: replace exact text, each old exactly once unless replace_all, applied in order, all or none; returns the diff."}, m.dshEdit)
		addTool(srv, &mcp.Tool{Name: "dsh_patch", Title: "dsh-fs patch",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)},
			Description: "dsh-fs patch: apply a multi-file patch (a unified diff, or apply_patch's *** Begin Patch format) all or nothing: add, update, delete and move files; returns each file's action, sha256 and diff."}, m.dshPatch)
	}
	return srv, m
}

func ptr[T any](v T) *T { return &v }

// instructions are the server's instructions to the client: the
// sandbox:policy block of policy --context, for a server, with where
// reads may go (allowed, the allowed folders). Nothing a tool
// call sends widens the fence but the escalate argument, which only asks.
func instructions(p sandbox.Policy, allowed []string) string {
	var b strings.Builder
	b.WriteString("<sandbox:policy>\n")
	roots, err := sandbox.NewFence(p).Roots()
	if err == nil {
		// The CLI's lines, but for where reads go: a CLI call's reads are
		// not confined, a server's are (policy).
		var fence strings.Builder
		cli.FenceLines(&fence, p, roots)
		for _, line := range strings.SplitAfter(fence.String(), "\n") {
			if !strings.HasPrefix(line, "reads: ") || p.Mode == sandbox.DangerFullAccess {
				b.WriteString(line)
			}
		}
	} else {
		fmt.Fprintf(&b, "mode: %s\n", p.Mode)
	}
	if p.Mode != sandbox.DangerFullAccess {
		fmt.Fprintf(&b, "reads: only within the allowed folders (%s)", strings.Join(allowed, ", "))
		if p.Mode == sandbox.WorkspaceWrite {
			b.WriteString(" and the writable roots")
		}
		if len(p.DenyRead) > 0 {
			fmt.Fprintf(&b, ", except %s", strings.Join(p.DenyRead, ", "))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "a denied call is a tool error with FS_SANDBOX_DENIED and %s\n", sandbox.Marker(p.Mode))
	switch p.Approval {
	case sandbox.ApprovalNever:
		b.WriteString("nothing a tool call sends widens this fence; escalation is disabled: ask the user to change the policy\n")
	case sandbox.ApprovalTTY:
		b.WriteString("nothing a tool call sends widens this fence; no escalation can be approved over MCP here (approval: tty): ask the user\n")
	default:
		fmt.Fprintf(&b, "nothing a tool call sends widens this fence but the escalate argument of write_file, edit_file, dsh_write and dsh_edit, "+
			"which asks for a mode (up to %s) for that one call; the trusted approval decides: retry a denied call with it only when the user agrees\n", p.MaxMode)
	}
	b.WriteString("</sandbox:policy>\n")
	return b.String()
}

// policy is the policy of one call from the client of ss: the one loaded
// at start, narrowed to the client's roots when it offers them.
func (m *server) policy(ss *mcp.ServerSession) sandbox.Policy {
	p := m.settings.Policy
	p.Within = m.roots.within(ss)
	if p.Mode != sandbox.DangerFullAccess {
		// Reads too stay within the allowed folders (narrowed by the
		// client's roots), as the official server keeps them: never nil
		// here, since nil would confine nothing.
		p.ReadWithin = slices.Clip(m.allowed)
		if p.Within != nil {
			p.ReadWithin = append([]string{}, sandbox.Intersect(m.allowed, p.Within)...)
		}
	}
	return p
}

// begin makes the fence of one call, from the settings loaded at start,
// and resolves its path.
func (m *server) begin(ss *mcp.ServerSession, path string) (*sandbox.Fence, sandbox.Target, error) {
	f := sandbox.NewFence(m.policy(ss))
	t, err := f.Resolve(path)
	return f, t, err
}

// beginMutation is begin for a tool that mutates: the escalation the call
// asks for is set on its fence as the CLI's --escalate sets it. Where the
// server can run an escalated call elsewhere (carried is true and it has
// an escalator), the fence hands it over; otherwise it is refused before
// any approver is asked. The model's argument only asks; it never
// approves.
func (m *server) beginMutation(ss *mcp.ServerSession, path, escalate string, carried bool) (*sandbox.Fence, sandbox.Target, error) {
	if m.startElsewhere != nil {
		// The escalator must be forked before this call's write puts
		// the process under Landlock, which a child would inherit.
		m.startElsewhere()
	}
	f := sandbox.NewFence(m.policy(ss))
	if escalate != "" {
		mode, err := sandbox.ParseMode(escalate)
		if err != nil {
			return f, sandbox.Target{Given: path}, fserr.New(fserr.InvalidArgument, "escalate: "+err.Error())
		}
		approver := approval.New(f.Policy(), mode)
		switch {
		case !carried:
			approver.NoGrant = "create_directory and move_file have no escalated path; ask the user to make the change"
		case m.elsewhere != nil:
			approver.Elsewhere = true
		default:
			approver.NoGrant = m.noGrant
		}
		f.SetApprover(approver)
	}
	t, err := f.Resolve(path)
	return f, t, err
}

// noGrantReason says why dsh-fs mcp refuses an escalation that the trusted
// approval could grant, when it has no escalator: tty has no terminal
// here (the server's standard input and output are the MCP pipe), and
// why is why the escalator could not be started.
func noGrantReason(a sandbox.Approval, why string) string {
	if a == sandbox.ApprovalTTY {
		return "approval: tty cannot ask inside dsh-fs mcp, whose standard input and output are the MCP pipe; ask the user to make the change or to run dsh-fs with --escalate"
	}
	return "no escalated call can be run here (" + why + "); ask the user to make the change or to run dsh-fs with --escalate"
}

func (m *server) diffOptions(form diff.Form) diff.Options {
	s := m.settings
	return diff.Options{Context: s.DiffContext, BasisMaxBytes: s.DiffBasisMaxBytes, MaxBytes: s.DiffMaxBytes, Form: form}
}

// toolError is the text of a failed drop-in call: the message, the code,
// and for a denial the marker and the writable roots. The SDK returns it
// as a tool error (isError), which the model sees.
func toolError(err error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Error: %s\ncode: %s", err.Error(), fserr.CodeOf(err))
	var de *sandbox.DeniedError
	if errors.As(err, &de) {
		fmt.Fprintf(&b, "\n%s", de.Marker())
		if de.Reason != "" {
			fmt.Fprintf(&b, "\nreason: %s", de.Reason)
		}
		if len(de.WritableRoots) > 0 {
			fmt.Fprintf(&b, "\nwritable roots: %s", strings.Join(de.WritableRoots, ", "))
		}
		// Only a refused escalation's hint: the others name the CLI's
		// --escalate, which over MCP is refused (noGrantReason).
		if h := de.Hint(); h != "" && de.Refusal != "" {
			fmt.Fprintf(&b, "\nhint: %s", h)
		}
		b.WriteString("\nThe sandbox refused this call: do not try to get around it; if the change is needed, ask the user.")
	}
	var ff *forwardedFailure
	if errors.As(err, &ff) {
		return errors.New(ff.text())
	}
	var fe *fserr.Error
	if errors.As(err, &fe) {
		if h := mcpHint(fe); h != "" {
			fmt.Fprintf(&b, "\nhint: %s", h)
		}
	}
	return errors.New(b.String())
}

// cliHints are the hints of the operations that name what only the CLI
// has, with what an MCP client has instead.
var cliHints = map[string]string{
	"read --raw streams the bytes unchanged": "read_media_file returns an image or audio file base64-encoded; a binary file is not read as text",
	"write replaces a binary file whole":     "write_file replaces a binary file whole",
}

// mcpHint is fe's hint for an MCP client: the CLI's, in the client's
// terms where it names a CLI command (cliHints), and none where it names
// a CLI flag, which a tool call cannot pass.
func mcpHint(fe *fserr.Error) string {
	if h, ok := cliHints[fe.Hint]; ok {
		return h
	}
	if strings.Contains(fe.Hint, "--") {
		return ""
	}
	return fe.Hint
}

// text is the success of a drop-in tool.
func text(s string) (*mcp.CallToolResult, textResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, textResult{Content: s}, nil
}

func fail(err error) (*mcp.CallToolResult, textResult, error) {
	return nil, textResult{}, toolError(err)
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
	f, t, err := m.begin(ss, path)
	if err != nil {
		return "", err
	}
	opt := fsops.ReadOptions{Offset: 1, Limit: math.MaxInt32, MaxBytes: m.settings.ReadMaxBytes}
	switch {
	case head != nil:
		if *head < 1 {
			return "", fserr.New(fserr.InvalidArgument, "head must be 1 or more")
		}
		opt.Limit = *head
	case tail != nil:
		if *tail < 1 {
			return "", fserr.New(fserr.InvalidArgument, "tail must be 1 or more")
		}
		first, err := fsops.Read(f, t, fsops.ReadOptions{Offset: 1, Limit: 1, MaxBytes: 1})
		if err != nil {
			return "", err
		}
		opt.Offset, opt.Limit = max(1, first.TotalLines-*tail+1), *tail
	}
	res, err := fsops.Read(f, t, opt)
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
	f, t, err := m.begin(req.Session, in.Path)
	if err != nil {
		return nil, nil, toolError(err)
	}
	buf := &cappedBuffer{limit: mediaMaxBytes}
	if _, err := fsops.ReadRaw(f, t, buf); err != nil {
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
		c = &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "file://" + t.Path, MIMEType: mime, Blob: buf.buf}}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{c}}, nil, nil
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
			var de *sandbox.DeniedError
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
	f, t, err := m.beginMutation(req.Session, in.Path, in.Escalate, true)
	if err != nil {
		return fail(err)
	}
	_, err = fsops.Write(f, t, fsops.WriteOptions{Content: strings.NewReader(in.Content), Overwrite: true, Diff: m.diffOptions(diff.FormSummary)})
	var ee *sandbox.ElsewhereError
	if errors.As(err, &ee) {
		call := forwardedCall{req: session.Request{Op: session.OpWrite, Path: in.Path, Diff: "summary",
			Write: &session.WriteRequest{Content: []byte(in.Content), Overwrite: true}},
			preview: m.writePreview(f, t, fsops.WriteOptions{Content: strings.NewReader(in.Content), Overwrite: true})}
		var ask *mcp.CallToolResult
		if _, ask, err = m.escalated(req, f, t, ee, call); ask != nil {
			return ask, textResult{}, nil
		}
	}
	if err != nil {
		return fail(err)
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
	f, t, err := m.beginMutation(req.Session, in.Path, in.Escalate, true)
	if err != nil {
		return fail(err)
	}
	edits := make([]fsops.Replacement, len(in.Edits))
	for i, e := range in.Edits {
		edits[i] = fsops.Replacement{Old: e.OldText, New: e.NewText}
	}
	res, err := fsops.Edit(f, t, fsops.EditOptions{Edits: edits, DryRun: in.DryRun, Diff: m.diffOptions(diff.FormFull)})
	var ee *sandbox.ElsewhereError
	if errors.As(err, &ee) {
		call := forwardedCall{req: session.Request{Op: session.OpEdit, Path: in.Path, Diff: "full", DryRun: in.DryRun,
			Edit: &session.EditRequest{Edits: edits}},
			preview: m.editPreview(f, t, fsops.EditOptions{Edits: edits})}
		var line json.RawMessage
		var ask *mcp.CallToolResult
		if line, ask, err = m.escalated(req, f, t, ee, call); ask != nil {
			return ask, textResult{}, nil
		}
		if err == nil {
			res = &fsops.EditResult{}
			err = json.Unmarshal(line, res)
		}
	}
	if err != nil {
		return fail(err)
	}
	return text(editedText(res.Diff))
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
	f, t, err := m.beginMutation(req.Session, in.Path, in.Escalate, false)
	if err != nil {
		return fail(err)
	}
	if _, err := fsops.Mkdir(f, t); err != nil {
		return fail(f.Escalate(err, &t, sandbox.Preview{}))
	}
	return text("Successfully created directory " + in.Path)
}

type moveArgs struct {
	Source      string `json:"source"`
	Destination string `json:"destination"`
	Escalate    string `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) moveFile(_ context.Context, req *mcp.CallToolRequest, in moveArgs) (*mcp.CallToolResult, textResult, error) {
	f, src, err := m.beginMutation(req.Session, in.Source, in.Escalate, false)
	if err != nil {
		return fail(err)
	}
	dst, err := f.Resolve(in.Destination)
	if err != nil {
		return fail(err)
	}
	if err := fsops.Move(f, src, dst); err != nil {
		// The escalate argument is put to the fence as for a write; it
		// is refused whatever approval says (Approver.NoGrant): a move has no
		// escalated path to carry it out.
		denied := &src
		var de *sandbox.DeniedError
		if errors.As(err, &de) && de.Path == dst.Given {
			denied = &dst
		}
		return fail(f.Escalate(err, denied, sandbox.Preview{}))
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
	f, t, err := m.begin(ss, path)
	if err != nil {
		return nil, err
	}
	res, err := fsops.List(f, t, fsops.ListOptions{All: true, Recursive: recursive, Limit: listLimit})
	if err != nil || !res.Truncated || !recursive {
		return res, err
	}
	all, err := fsops.List(f, t, fsops.ListOptions{All: true, Recursive: true, Limit: countLimit})
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
	f, t, err := m.begin(req.Session, in.Path)
	if err != nil {
		return fail(err)
	}
	// Searched by its canonical path, so what is found is named by full
	// paths, as the official server names them.
	if t, err = f.Resolve(t.Path); err != nil {
		return fail(err)
	}
	globs := []string{}
	for _, p := range in.ExcludePatterns {
		globs = append(globs, "!"+p)
	}
	res, err := fsops.Find(f, t, fsops.FindOptions{Glob: in.Pattern, Limit: listLimit, MaxBytes: 16 << 20,
		WalkOptions: fsops.WalkOptions{NoIgnore: true, Globs: globs}})
	if err != nil {
		return fail(err)
	}
	if len(res.Entries) == 0 {
		return text("No matches found")
	}
	lines := make([]string, len(res.Entries))
	for i, e := range res.Entries {
		lines[i] = e.Path
	}
	out := strings.Join(lines, "\n")
	if res.Truncated {
		out += fmt.Sprintf("\n[dsh-fs: %d of %d matches shown; narrow the pattern]", len(res.Entries), res.Total)
	}
	return text(out)
}

func (m *server) getFileInfo(_ context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, textResult, error) {
	f, t, err := m.begin(req.Session, in.Path)
	if err != nil {
		return fail(err)
	}
	res, err := fsops.Stat(f, t)
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
	return text("Allowed directories:\n" + strings.Join(allowed, "\n"))
}

// dsh tools: the CLI's results, header included, as structured content.

// dshResult is a dsh tool's result: the CLI's JSON object, as text and as
// structured content; a failure is a tool error whose structured content
// is the CLI's failure object (the denial with its marker included).
func (m *server) dshResult(op, path string, f *sandbox.Fence, t sandbox.Target, result any, err error) (*mcp.CallToolResult, any, error) {
	h := cli.Header{Op: op, Path: path, Resolved: t.Path, Mode: string(m.settings.Policy.Mode)}
	if f != nil {
		h.Mode = string(f.Mode())
	}
	if err != nil {
		fl := cli.NewFailure(h, err)
		raw, jerr := json.Marshal(fl)
		if jerr != nil {
			return nil, nil, jerr
		}
		msg := toolError(err).Error()
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg + "\n" + string(raw)}}}, json.RawMessage(raw), nil
	}
	h.OK = true
	raw, jerr := cli.ResultJSON(h, result)
	if jerr != nil {
		return nil, nil, jerr
	}
	return nil, raw, nil
}

// dshForwarded is dshResult for a call run elsewhere: its result line is
// the structured content as it is, a failure line too (as a tool error).
func (m *server) dshForwarded(op, path string, f *sandbox.Fence, t sandbox.Target) func(json.RawMessage, *mcp.CallToolResult, error) (*mcp.CallToolResult, any, error) {
	return func(line json.RawMessage, ask *mcp.CallToolResult, err error) (*mcp.CallToolResult, any, error) {
		var ff *forwardedFailure
		switch {
		case ask != nil:
			return ask, nil, nil
		case errors.As(err, &ff):
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: toolError(err).Error() + "\n" + string(ff.raw)}}}, ff.raw, nil
		case err != nil:
			return m.dshResult(op, path, f, t, nil, err)
		}
		return nil, line, nil
	}
}

// writePreview and editPreview preview a write or an edit of t for the
// client's user (forwardedCall.preview).
func (m *server) writePreview(f *sandbox.Fence, t sandbox.Target, opt fsops.WriteOptions) func() (diff.Result, string, bool, error) {
	return func() (diff.Result, string, bool, error) {
		opt.Diff = m.diffOptions(diff.FormFull)
		res, err := fsops.PreviewWrite(f, t, opt)
		if err != nil {
			return diff.Result{}, "", false, err
		}
		return res.Diff, res.PreviousSHA256, !res.Created, nil
	}
}

func (m *server) editPreview(f *sandbox.Fence, t sandbox.Target, opt fsops.EditOptions) func() (diff.Result, string, bool, error) {
	return func() (diff.Result, string, bool, error) {
		opt.Diff = m.diffOptions(diff.FormFull)
		res, err := fsops.PreviewEdit(f, t, opt)
		if err != nil {
			return diff.Result{}, "", false, err
		}
		return res.Diff, res.PreviousSHA256, true, nil
	}
}

type dshReadArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return, counted from 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most lines to return (default read_max_lines)"`
}

func (m *server) dshRead(_ context.Context, req *mcp.CallToolRequest, in dshReadArgs) (*mcp.CallToolResult, any, error) {
	f, t, err := m.begin(req.Session, in.Path)
	var res *fsops.ReadResult
	if err == nil {
		limit := m.settings.ReadMaxLines
		if in.Limit != 0 {
			limit = in.Limit
		}
		res, err = fsops.Read(f, t, fsops.ReadOptions{Offset: in.Offset, Limit: limit, MaxBytes: m.settings.ReadMaxBytes})
	}
	return m.dshResult("read", in.Path, f, t, res, err)
}

type dshWriteArgs struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	IfMatch   string `json:"if_match,omitempty" jsonschema:"write only if the current content has this sha256"`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"replace an existing file unseen"`
	Mkdir     bool   `json:"mkdir,omitempty" jsonschema:"create missing parent folders"`
	DryRun    bool   `json:"dry_run,omitempty" jsonschema:"compute the result and diff without writing"`
	Escalate  string `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) dshWrite(_ context.Context, req *mcp.CallToolRequest, in dshWriteArgs) (*mcp.CallToolResult, any, error) {
	f, t, err := m.beginMutation(req.Session, in.Path, in.Escalate, true)
	var res *fsops.WriteResult
	if err == nil {
		res, err = fsops.Write(f, t, fsops.WriteOptions{Content: strings.NewReader(in.Content), Mkdir: in.Mkdir, IfMatch: in.IfMatch,
			Overwrite: in.Overwrite, DryRun: in.DryRun, Diff: m.diffOptions(diff.FormAuto)})
	}
	var ee *sandbox.ElsewhereError
	if errors.As(err, &ee) {
		call := forwardedCall{req: session.Request{Op: session.OpWrite, Path: in.Path, IfMatch: in.IfMatch, DryRun: in.DryRun,
			Write: &session.WriteRequest{Content: []byte(in.Content), Mkdir: in.Mkdir, Overwrite: in.Overwrite}},
			preview: m.writePreview(f, t, fsops.WriteOptions{Content: strings.NewReader(in.Content), Mkdir: in.Mkdir, Overwrite: in.Overwrite, IfMatch: in.IfMatch})}
		return m.dshForwarded("write", in.Path, f, t)(m.escalated(req, f, t, ee, call))
	}
	return m.dshResult("write", in.Path, f, t, res, err)
}

type dshEditArgs struct {
	Path     string              `json:"path"`
	Edits    []fsops.Replacement `json:"edits" jsonschema:"applied in order, all or none; each old must occur exactly once unless replace_all"`
	IfMatch  string              `json:"if_match,omitempty" jsonschema:"edit only if the current content has this sha256"`
	DryRun   bool                `json:"dry_run,omitempty" jsonschema:"compute the result and diff without writing"`
	Escalate string              `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

func (m *server) dshEdit(_ context.Context, req *mcp.CallToolRequest, in dshEditArgs) (*mcp.CallToolResult, any, error) {
	f, t, err := m.beginMutation(req.Session, in.Path, in.Escalate, true)
	var res *fsops.EditResult
	if err == nil {
		if len(in.Edits) == 0 {
			err = fserr.New(fserr.InvalidArgument, "edit: edits: give at least one {old, new}")
		} else {
			res, err = fsops.Edit(f, t, fsops.EditOptions{Edits: in.Edits, IfMatch: in.IfMatch, DryRun: in.DryRun, Diff: m.diffOptions(diff.FormAuto)})
		}
	}
	var ee *sandbox.ElsewhereError
	if errors.As(err, &ee) {
		call := forwardedCall{req: session.Request{Op: session.OpEdit, Path: in.Path, IfMatch: in.IfMatch, DryRun: in.DryRun,
			Edit: &session.EditRequest{Edits: in.Edits}}, preview: m.editPreview(f, t, fsops.EditOptions{Edits: in.Edits, IfMatch: in.IfMatch})}
		return m.dshForwarded("edit", in.Path, f, t)(m.escalated(req, f, t, ee, call))
	}
	return m.dshResult("edit", in.Path, f, t, res, err)
}

type dshLsArgs struct {
	Path      string `json:"path,omitempty" jsonschema:"the folder (default the session cwd)"`
	All       bool   `json:"all,omitempty" jsonschema:"include names that start with a dot"`
	Recursive bool   `json:"recursive,omitempty" jsonschema:"descend into folders (never through symlinks)"`
	Depth     int    `json:"depth,omitempty" jsonschema:"how many levels to list, 1 or more"`
	Limit     int    `json:"limit,omitempty" jsonschema:"most entries to return (default 1000)"`
}

func (m *server) dshLs(_ context.Context, req *mcp.CallToolRequest, in dshLsArgs) (*mcp.CallToolResult, any, error) {
	if in.Path == "" {
		in.Path = "."
	}
	if in.Limit == 0 {
		in.Limit = fsops.DefaultListLimit
	}
	f, t, err := m.begin(req.Session, in.Path)
	var res *fsops.ListResult
	if err == nil {
		res, err = fsops.List(f, t, fsops.ListOptions{All: in.All, Recursive: in.Recursive, Depth: in.Depth, Limit: in.Limit})
	}
	return m.dshResult("ls", in.Path, f, t, res, err)
}

func (m *server) dshStat(_ context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
	f, t, err := m.begin(req.Session, in.Path)
	var res *fsops.StatResult
	if err == nil {
		res, err = fsops.Stat(f, t)
	}
	return m.dshResult("stat", in.Path, f, t, res, err)
}

func (m *server) dshPolicy(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	s := *m.settings
	s.Policy = m.policy(req.Session)
	f := sandbox.NewFence(s.Policy)
	roots, err := f.Roots()
	var res cli.PolicyResult
	if err == nil {
		res, err = cli.NewPolicyResult(&s, roots)
	}
	return m.dshResult("policy", "", f, sandbox.Target{}, res, err)
}
