// Command dsh-fs is the file tool shell-based coding agents call instead of
// cat, sed -i and echo >. See README.md.
package main

import (
	"os"

	"github.com/dshfs/dsh-fs/cmd"
)

func main() { os.Exit(cmd.Main()) }
