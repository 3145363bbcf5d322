package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/diff"
	"github.com/dshfs/dsh-fs/internal/fsops"
)

type dshPatchArgs struct {
	Patch   string            `json:"patch" jsonschema:"the patch: a unified diff as git diff writes it, or *** Begin Patch … *** End Patch (apply_patch)"`
	IfMatch map[string]string `json:"if_match,omitempty" jsonschema:"file (as the patch names it) to the sha256 its current content must have"`
	DryRun  bool              `json:"dry_run,omitempty" jsonschema:"compute the result and diffs without writing"`
}

// dshPatch is dsh-fs patch over MCP: the same call path and result as
// the CLI's, all or nothing across the patch's files. It takes no
// escalate argument: a denial is final here.
func (m *server) dshPatch(_ context.Context, req *mcp.CallToolRequest, in dshPatchArgs) (*mcp.CallToolResult, any, error) {
	f, t, err := m.beginMutation(req.Session, ".", "", true)
	var res *fsops.PatchResult
	if err == nil {
		p, perr := fsops.ParsePatch([]byte(in.Patch))
		if err = perr; err == nil {
			res, err = fsops.Patch(f, p, fsops.PatchOptions{IfMatch: in.IfMatch, DryRun: in.DryRun, Diff: m.diffOptions(diff.FormAuto)})
		}
	}
	t.Path = "" // a patch has no one path
	return m.dshResult("patch", "", f, t, res, err)
}
