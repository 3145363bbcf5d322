package result

import (
	"fmt"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fsops"
)

// ToolText is the text of a failed MCP tool call, which the model sees
// as the tool error: the message, the code, and for a denial the marker,
// the rule, the writable roots and, where an escalation was refused, why
// not to retry. Otherwise the hint, in the client's terms (mcpHint).
func ToolText(f Failure) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Error: %s\ncode: %s", f.Error.Message, f.Error.Code)
	if d, ok := f.Error.Detail.(fsops.StaleDetail); ok && d.Diff != nil && d.Diff.Text != "" {
		// What changed since the read, so the retry needs no read.
		fmt.Fprintf(&b, "\nchanged since it was read:\n%s", strings.TrimSuffix(d.Diff.Text, "\n"))
	}
	if f.Marker != "" {
		fmt.Fprintf(&b, "\n%s", f.Marker)
		if f.Error.Reason != "" {
			fmt.Fprintf(&b, "\nreason: %s", f.Error.Reason)
		}
		if len(f.Error.WritableRoots) > 0 {
			fmt.Fprintf(&b, "\nwritable roots: %s", strings.Join(f.Error.WritableRoots, ", "))
		}
		if f.Error.WorkspaceRoot != "" {
			fmt.Fprintf(&b, "\nworkspace root: %s", f.Error.WorkspaceRoot)
		}
		// Only a refused escalation's hint: the others name the CLI's
		// --escalate, which a tool call cannot pass.
		if f.Escalation != nil && f.refused {
			fmt.Fprintf(&b, "\nhint: %s", f.Escalation.Hint)
		}
		b.WriteString("\nThe sandbox refused this call: do not try to get around it; if the change is needed, ask the user.")
	} else if h := mcpHint(f.Error.Hint); h != "" {
		fmt.Fprintf(&b, "\nhint: %s", h)
	}
	return b.String()
}

// cliHints are the hints of the operations that name what only the CLI
// has, with what an MCP client has instead.
var cliHints = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"read --raw streams the bytes unchanged":                              "read_media_file returns an image or audio file base64-encoded; a binary file is not read as text",
		"write replaces a binary file whole":                                  "write_file replaces a binary file whole",
		"dsh-fs mkdir --parents makes a folder and the missing ones above it": "create_directory makes a folder and the missing ones above it",
	}
})

// mcpHint is a hint for an MCP client: the CLI's, in the client's terms
// where it names a CLI command (cliHints), and none where it names a CLI
// flag, which a tool call cannot pass.
func mcpHint(hint string) string {
	if h, ok := cliHints()[hint]; ok {
		return h
	}
	if strings.Contains(hint, "--") {
		return ""
	}
	return hint
}
