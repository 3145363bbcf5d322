// Command cobra is scripts/floor/cobraviper without viper, for
// scripts/bench.sh: what the stat row could reach if the policy were read
// without viper, which issue 2 requires. It is measured, never shipped.
package main

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{Use: "cobra", SilenceUsage: true}
	root.AddCommand(&cobra.Command{
		Use:  "stat PATH",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			fi, err := os.Stat(args[0])
			if err != nil {
				return err
			}
			return json.NewEncoder(c.OutOrStdout()).Encode(map[string]any{"ok": true, "mode": os.Getenv("DSH_FS_MODE"), "size": fi.Size()})
		},
	})
	if root.Execute() != nil {
		os.Exit(1)
	}
}
