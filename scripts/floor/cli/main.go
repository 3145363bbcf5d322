// Command cli is a start-up floor for scripts/bench.sh: a bare cobra
// command that stats a file and prints one JSON line, nothing of dsh-fs.
// Built with -tags viper it reads its one setting through a fresh viper
// (viper.go), as dsh-fs must (issue 2). The two builds against each other
// and against stat show what cobra and viper cost before any work is done.
// It is measured, never shipped.
package main

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"
)

// mode is the one setting; viper.go reads it through viper instead.
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
