// Command dsh-fs-mcp is the MCP server behind dsh-fs mcp, which runs it from
// the folder dsh-fs is in. It is the whole dsh-fs with the server linked in:
// the MCP SDK stays out of the CLI, whose every call would pay for it. Run
// through dsh-fs mcp, not by name. See README.md, Over MCP.
package main

import (
	"os"

	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/mcpserver"
)

func main() {
	app := cli.NewApp(config.DefaultLocations())
	app.ServeMCP = func(s *config.Settings, dirs []string) error {
		return mcpserver.Serve(mcpserver.Host{Stdin: app.Stdin, Stdout: app.Stdout, Stderr: app.Stderr,
			LookupEnv: app.LookupEnv}, s, dirs)
	}
	os.Exit(app.Run(os.Args[1:]))
}
