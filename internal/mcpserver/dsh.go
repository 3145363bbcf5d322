package mcpserver

import (
	"context"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/patch"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session"
)

// dsh tools: the CLI's results, header included, as structured content.

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
	var res any
	if err == nil {
		res, err = m.describePolicy(&s, roots)
	}
	return m.dshResult("policy", "", f, sandbox.Target{}, res, err)
}

type dshPatchArgs struct {
	Patch    string            `json:"patch" jsonschema:"the patch: a unified diff as git diff writes it, or *** Begin Patch … *** End Patch (apply_patch)"`
	IfMatch  map[string]string `json:"if_match,omitempty" jsonschema:"file (as the patch names it) to the sha256 its current content must have"`
	DryRun   bool              `json:"dry_run,omitempty" jsonschema:"compute the result and diffs without writing"`
	Escalate string            `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
}

// dshPatch is dsh-fs patch over MCP: the same call path and result as
// the CLI's, all or nothing across the patch's files. Escalated, the
// whole patch runs elsewhere as dsh_write's does, its approver shown the
// whole patch's diff and the approval pinned to that patch and to the
// files as they were shown.
func (m *server) dshPatch(_ context.Context, req *mcp.CallToolRequest, in dshPatchArgs) (*mcp.CallToolResult, any, error) {
	f, t, err := m.beginMutation(req.Session, ".", in.Escalate, true)
	var res *fsops.PatchResult
	var p *patch.Patch
	if err == nil {
		if p, err = fsops.ParsePatch([]byte(in.Patch)); err == nil {
			res, err = fsops.Patch(f, p, fsops.PatchOptions{IfMatch: in.IfMatch, DryRun: in.DryRun, Diff: m.diffOptions(diff.FormAuto)})
		}
	}
	t.Path = "" // a patch has no one path
	var ee *sandbox.ElsewhereError
	if errors.As(err, &ee) {
		// The approval is asked, and taken, for the file the fence
		// denied first, as the escalated call's fence asks for it.
		denied, rerr := f.Resolve(ee.Denied.Path)
		if rerr != nil {
			return m.dshResult("patch", "", f, t, nil, rerr)
		}
		call := forwardedCall{req: session.Request{Op: session.OpPatch, DryRun: in.DryRun,
			Patch: &session.PatchRequest{Patch: []byte(in.Patch), IfMatch: in.IfMatch}},
			preview: m.patchPreview(f, p, fsops.PatchOptions{IfMatch: in.IfMatch})}
		return m.dshForwarded("patch", "", f, t)(m.escalated(req, f, denied, ee, call))
	}
	return m.dshResult("patch", "", f, t, res, err)
}
