// Command cobraviper is the start-up floor of the stack issue 2 requires,
// for scripts/bench.sh: a bare cobra command with a fresh viper, stat of a
// file and one JSON line, nothing of dsh-fs. What this costs more than
// gostat is the price of importing cobra and viper (their package init
// and the code they pull in), which dsh-fs cannot avoid.
package main

import (
	"encoding/json"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/viper"
)

func main() {
	v := viper.New()
	v.SetEnvPrefix("DSH_FS")
	v.AutomaticEnv()
	root := &cobra.Command{Use: "cobraviper", SilenceUsage: true}
	root.AddCommand(&cobra.Command{
		Use:  "stat PATH",
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			fi, err := os.Stat(args[0])
			if err != nil {
				return err
			}
			return json.NewEncoder(c.OutOrStdout()).Encode(map[string]any{"ok": true, "mode": v.GetString("mode"), "size": fi.Size()})
		},
	})
	if root.Execute() != nil {
		os.Exit(1)
	}
}
