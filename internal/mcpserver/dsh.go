package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/fsops"
	"github.com/dshfs/dsh-fs/internal/policyview/report"
	"github.com/dshfs/dsh-fs/internal/request"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// dsh tools: the CLI's results, header included, as structured content.

type dshReadArgs struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty" jsonschema:"first line to return, counted from 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"most lines to return (default read_max_lines)"`
}

func (m *server) dshRead(_ context.Context, req *mcp.CallToolRequest, in dshReadArgs) (*mcp.CallToolResult, any, error) {
	r := request.Read{Path: in.Path, Offset: in.Offset}
	if in.Limit != 0 {
		r.Limit = &in.Limit
	}
	return m.dshRun(req.Session, in.Path, r)
}

type dshWriteArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	IfMatch string `json:"if_match,omitempty" jsonschema:"write only if the current content has this sha256"`
	// IfMatchContent is a pointer: an empty file read is "" given back.
	IfMatchContent *string `json:"if_match_content,omitempty" jsonschema:"with if_match: the content you read, given back when this server did not read it (a stale if_match then shows the diff since)"`
	Overwrite      bool    `json:"overwrite,omitempty" jsonschema:"replace an existing file unseen"`
	Mkdir          bool    `json:"mkdir,omitempty" jsonschema:"create missing parent folders"`
	DryRun         bool    `json:"dry_run,omitempty" jsonschema:"compute the result and diff without writing"`
	Escalate       string  `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
	Reason         string  `json:"reason,omitempty" jsonschema:"with escalate: why this call needs it, in a sentence (at most 1000 bytes); shown to the approver as your own words"`
}

func (m *server) dshWrite(_ context.Context, req *mcp.CallToolRequest, in dshWriteArgs) (*mcp.CallToolResult, any, error) {
	w := request.Write{Path: in.Path, Content: []byte(in.Content), Mkdir: in.Mkdir, Overwrite: in.Overwrite,
		Mutation: request.Mutation{IfMatch: in.IfMatch, IfMatchContent: givenBack(in.IfMatchContent), DryRun: in.DryRun}}
	return m.dshMutated(in.Path, m.mutate(req, in.Path, escalateArgs{in.Escalate, in.Reason}, w, nil))
}

type dshEditArgs struct {
	Path    string              `json:"path"`
	Edits   []fsops.Replacement `json:"edits" jsonschema:"applied in order, all or none; each old must occur exactly once unless replace_all"`
	IfMatch string              `json:"if_match,omitempty" jsonschema:"edit only if the current content has this sha256"`
	// IfMatchContent is a pointer: an empty file read is "" given back.
	IfMatchContent *string `json:"if_match_content,omitempty" jsonschema:"with if_match: the content you read, given back when this server did not read it (a stale if_match then shows the diff since)"`
	DryRun         bool    `json:"dry_run,omitempty" jsonschema:"compute the result and diff without writing"`
	Escalate       string  `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
	Reason         string  `json:"reason,omitempty" jsonschema:"with escalate: why this call needs it, in a sentence (at most 1000 bytes); shown to the approver as your own words"`
}

func (m *server) dshEdit(_ context.Context, req *mcp.CallToolRequest, in dshEditArgs) (*mcp.CallToolResult, any, error) {
	var refuse error
	if len(in.Edits) == 0 {
		refuse = fserr.New(fserr.InvalidArgument, "edit: edits: give at least one {old, new}")
	}
	e := request.Edit{Path: in.Path, Edits: in.Edits, Mutation: request.Mutation{IfMatch: in.IfMatch, IfMatchContent: givenBack(in.IfMatchContent), DryRun: in.DryRun}}
	return m.dshMutated(in.Path, m.mutate(req, in.Path, escalateArgs{in.Escalate, in.Reason}, e, refuse))
}

// givenBack is the content read that a client gives back (if_match_content),
// nil when it gives none.
func givenBack(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
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
	return m.dshRun(req.Session, in.Path, request.List{Path: in.Path, All: in.All, Recursive: in.Recursive, Depth: in.Depth, Limit: in.Limit})
}

func (m *server) dshStat(_ context.Context, req *mcp.CallToolRequest, in pathArgs) (*mcp.CallToolResult, any, error) {
	return m.dshRun(req.Session, in.Path, request.Stat{Path: in.Path})
}

func (m *server) dshPolicy(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	s := *m.settings
	s.Policy = m.policy(req.Session)
	f := sandbox.NewFence(s.Policy)
	roots, err := f.Roots()
	var res any
	if err == nil {
		res, err = report.New(&s, roots)
	}
	return m.dshResult("policy", "", f, sandbox.Target{}, res, err)
}

type dshPatchArgs struct {
	Patch    string            `json:"patch" jsonschema:"the patch: a unified diff as git diff writes it, or *** Begin Patch … *** End Patch (apply_patch)"`
	IfMatch  map[string]string `json:"if_match,omitempty" jsonschema:"file (as the patch names it) to the sha256 its current content must have"`
	DryRun   bool              `json:"dry_run,omitempty" jsonschema:"compute the result and diffs without writing"`
	Escalate string            `json:"escalate,omitempty" jsonschema:"ask for this mode (danger-full-access) for this one call, as the CLI's --escalate; only the trusted approval setting decides"`
	Reason   string            `json:"reason,omitempty" jsonschema:"with escalate: why this call needs it, in a sentence (at most 1000 bytes); shown to the approver as your own words"`
}

// dshPatch is dsh-fs patch over MCP: the same call path and result as
// the CLI's, all or nothing across the patch's files. Escalated, the
// whole patch runs elsewhere as dsh_write's does, its approver shown the
// whole patch's diff and the approval pinned to that patch and to the
// files as they were shown.
func (m *server) dshPatch(_ context.Context, req *mcp.CallToolRequest, in dshPatchArgs) (*mcp.CallToolResult, any, error) {
	o := m.mutate(req, ".", escalateArgs{in.Escalate, in.Reason}, request.Patch{Patch: []byte(in.Patch), IfMatch: in.IfMatch, DryRun: in.DryRun}, nil)
	o.t = sandbox.Target{} // a patch has no one path
	return m.dshMutated("", o)
}

// dshRun is a dsh tool that reads: r, on path, run through
// internal/request under the call's fence, and its result.
func (m *server) dshRun(ss *mcp.ServerSession, path string, r request.Request) (*mcp.CallToolResult, any, error) {
	x, t, err := m.begin(ss, path)
	var res any
	if err == nil {
		res, err = x.Run(r)
	}
	return m.dshResult(r.Op(), path, x.Fence(), t, res, err)
}
