// Command cli is a start-up floor for scripts/bench.sh: a bare cobra
// command that stats a file and prints one JSON line, nothing of dsh-fs.
// Against stat it shows what cobra costs before any work is done.
// It is measured, never shipped.
package main

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"
)

// mode is the one setting.
var mode = func() string { return os.Getenv("DSH_FS_MODE") }

func main() {
	root := &cobra.Command{Use: "cli", SilenceUsage: true}
	root.AddCommand(&cobra.Command{
		Use:  "stat PATH",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			fi, err := os.Stat(args[0])
			if err != nil {
				return err
			}
			return json.NewEncoder(c.OutOrStdout()).Encode(map[string]any{"ok": true, "mode": mode(), "size": fi.Size()})
		},
	})
	if root.Execute() != nil {
		os.Exit(1)
	}
}
