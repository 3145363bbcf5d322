// Command gostat is a start-up floor for scripts/bench.sh: the least a Go
// program can do for "dsh-fs stat" (stat a file, print one JSON line),
// with none of dsh-fs's dependencies. It is measured, never shipped.
package main

import (
	"encoding/json"
	"os"
)

func main() {
	fi, err := os.Stat(os.Args[1])
	if err != nil {
		os.Exit(1)
	}
	json.NewEncoder(os.Stdout).Encode(map[string]any{"ok": true, "size": fi.Size()})
}
