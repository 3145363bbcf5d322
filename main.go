// Command dsh-fs is the file tool shell-based coding agents call instead of
// cat, sed -i and echo >. See README.md.
package main

import (
	"os"

	"github.com/dshfs/dsh-fs/internal/cli"
)

func main() { os.Exit(cli.Main()) }
