// Command gen-docs writes dsh-fs's man pages, one per command, into
// docs/man/ (or the folder given as its argument):
//
//	go run ./scripts/gen-docs
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra/doc"

	"github.com/dshfs/dsh-fs/cmd"
)

func main() {
	dir := "docs/man"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := generate(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gen-docs:", err)
		os.Exit(1)
	}
}

// generate writes the man pages of the whole command tree into dir.
func generate(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root := cmd.NewCmdRoot(&cmd.App{Stdin: os.Stdin, Stdout: io.Discard, Stderr: io.Discard})
	root.DisableAutoGenTag = true // no generation date: the pages change only when the commands do
	header := &doc.GenManHeader{Title: "DSH-FS", Section: "1", Source: "dsh-fs", Manual: "dsh-fs manual"}
	return doc.GenManTree(root, header, dir)
}
