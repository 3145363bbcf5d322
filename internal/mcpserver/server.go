package mcpserver

import (
	"path/filepath"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/escalation"
	"github.com/dshfs/dsh-fs/internal/memo"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/version"
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
	// runner runs the calls whose escalation the fence handed over;
	// nil when no escalation can be granted here, and grantRefusal says why.
	runner       *escalation.Runner
	grantRefusal string
	// startRunner sets runner and grantRefusal, once: at the first
	// mutating call. nil in read-only mode.
	startRunner func()
	// approvals are the escalations the client's user approved.
	approvals *clientApprovals
	// memory is what this process remembers of its reads, for the diff
	// of a stale if_match (request.Exec.Remember).
	memory *memo.Store
}

// newServer registers the tools; in read-only mode no tool that
// mutates is registered at all.
func newServer(s *config.Settings, dirs []string) (*mcp.Server, *server) {
	m := &server{settings: s, roots: newClientRoots(s.Policy.Home), approvals: newClientApprovals(),
		memory: memo.New(memo.ItemMax, memo.TotalMax)}
	p := s.Policy
	for _, d := range dirs {
		// Relative to the working directory the harness started the server in,
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
	srv := mcp.NewServer(&mcp.Implementation{Name: "dsh-fs", Version: version.Build().Version}, &mcp.ServerOptions{
		Instructions:            policyview.Server(p, m.allowed),
		RootsListChangedHandler: m.roots.changed,
	})
	srv.AddReceivingMiddleware(settleProtocol)
	mutates := p.Mode != policy.ReadOnly
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

// policy is the policy of one call from the client of ss: the one loaded
// at start, narrowed to the client's roots when it offers them.
func (m *server) policy(ss *mcp.ServerSession) policy.Policy {
	p := m.settings.Policy
	p.Within = m.roots.within(ss)
	if p.Mode != policy.DangerFullAccess {
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

// begin starts one call: its fence from the settings loaded at start,
// narrowed to the client's roots (internal/request runs every tool's
// typed request through it), and resolves its path there: the header
// names that target, and the request's run takes it.
func (m *server) begin(ss *mcp.ServerSession, path string) (*request.Exec, sandbox.Target, error) {
	// A start that asks for no escalation has nothing Begin can refuse.
	x, _ := request.Begin(m.start(ss))
	t, err := x.Resolve(path)
	return x, t, err
}

// start is the start of a call from the client of ss that asks for no
// escalation, with the bounds of the settings loaded at start and this
// process's memory.
func (m *server) start(ss *mcp.ServerSession) request.Start {
	return request.Start{Policy: m.policy(ss), Bounds: m.settings.Bounds(), Memory: m.memory}
}

// beginMutation is begin for a tool that mutates: the escalation the call
// asks for (escalate, and the model's reason for it) is set on its fence
// as the CLI's --escalate sets it. Where the server can run an escalated
// call elsewhere (carried is true and it has an escalator), the fence
// hands it over; otherwise it is refused before any approver is asked.
// The model's argument only asks; it never approves.
func (m *server) beginMutation(ss *mcp.ServerSession, path string, esc escalateArgs, carried bool) (*request.Exec, sandbox.Target, error) {
	if m.startRunner != nil {
		// The escalator must be forked before this call's write puts
		// the process under Landlock, which a child would inherit.
		m.startRunner()
	}
	start := m.start(ss)
	start.Escalate, start.Reason = esc.To, esc.Reason
	switch {
	case !carried:
		start.Approver.GrantRefusal = "create_directory and move_file have no escalated path; ask the user to make the change"
	case m.runner != nil:
		start.Approver.HandOver = true
	default:
		start.Approver.GrantRefusal = m.grantRefusal
	}
	x, err := request.Begin(start)
	if err != nil {
		return x, sandbox.Target{Given: path}, err
	}
	t, err := x.Resolve(path)
	return x, t, err
}

// grantRefusalFor says why dsh-fs mcp refuses an escalation that the trusted
// approval could grant, when it has no escalator: tty has no terminal
// here (the server's standard input and output are the MCP pipe), and
// why is why the escalator could not be started.
func grantRefusalFor(a policy.Approval, why string) string {
	if a == policy.ApprovalTTY {
		return "approval: tty cannot ask inside dsh-fs mcp, whose standard input and output are the MCP pipe; ask the user to make the change or to run dsh-fs with --escalate"
	}
	return "no escalated call can be run here (" + why + "); ask the user to make the change or to run dsh-fs with --escalate"
}
