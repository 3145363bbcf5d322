// Command dsh-fs-mcp is the MCP server behind dsh-fs mcp, which runs it from
// the folder dsh-fs is in. It is the whole dsh-fs with the server linked in:
// the MCP SDK stays out of the CLI, whose every call would pay for it. Run
// through dsh-fs mcp, not by name. See README.md, Over MCP.
package main

import (
	"os"

	"github.com/dshfs/dsh-fs/cmd"
	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/mcpserver"
)

func main() {
	app := cmd.NewApp(config.DefaultLocations())
	app.ServeMCP = mcpserver.Serve
	os.Exit(app.Run(os.Args[1:]))
}
