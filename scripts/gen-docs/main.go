// Command gen-docs writes dsh-fs's man pages, one per command, into
// docs/man/ (or the folder given as its argument):
//
//	go run ./scripts/gen-docs
//
// Each page is cobra's (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, EXAMPLE),
// with ENVIRONMENT, FILES and EXIT STATUS added before SEE ALSO, from the
// same tables the code uses: config.Environment, config's Locations and
// cli.ExitStatuses.
package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/dshfs/dsh-fs/internal/cli"
	"github.com/dshfs/dsh-fs/internal/config"
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
	root := cli.NewCmdRoot(&cli.App{Stdin: os.Stdin, Stdout: io.Discard, Stderr: io.Discard})
	root.DisableAutoGenTag = true // no generation date: the pages change only when the commands do
	// Cobra adds its help command when it runs; the man pages leave it
	// out, as GenManTree does.
	return genTree(root, dir, extraSections())
}

// genTree writes the page of c and of every command beneath it.
func genTree(c *cobra.Command, dir, extra string) error {
	for _, sub := range c.Commands() {
		if !sub.IsAvailableCommand() || sub.IsAdditionalHelpTopicCommand() {
			continue
		}
		if err := genTree(sub, dir, extra); err != nil {
			return err
		}
	}
	header := &doc.GenManHeader{Title: "DSH-FS", Section: "1", Source: "dsh-fs", Manual: "dsh-fs manual"}
	var page bytes.Buffer
	if err := doc.GenMan(c, header, &page); err != nil {
		return err
	}
	out, err := insertBefore(page.String(), ".SH SEE ALSO", extra)
	if err != nil {
		return fmt.Errorf("%s: %w", c.CommandPath(), err)
	}
	name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
	return os.WriteFile(filepath.Join(dir, name), []byte(out), 0o644)
}

// insertBefore puts extra before the line that starts with mark.
func insertBefore(page, mark, extra string) (string, error) {
	i := strings.Index(page, "\n"+mark)
	if i < 0 {
		return "", fmt.Errorf("no %q in the page", mark)
	}
	return page[:i+1] + extra + page[i+1:], nil
}

// extraSections are the ENVIRONMENT, FILES and EXIT STATUS sections every
// page carries, in roff.
func extraSections() string {
	var b strings.Builder
	b.WriteString(".SH ENVIRONMENT\n.PP\n")
	b.WriteString(roff("Each variable is a session source: it may narrow the trusted policy, never widen it; an empty variable counts as unset (docs/design.md §2.2). Where a flag sets the same setting (--mode for DSH_FS_MODE, --context for DSH_FS_DIFF_CONTEXT), the flag wins.") + "\n")
	for _, v := range config.Environment() {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", roff(v.Name), roff(v.Doc))
	}
	b.WriteString("\n\n.SH FILES\n")
	for _, f := range config.DefaultLocations().Files() {
		fmt.Fprintf(&b, ".TP\n\\fI%s\\fP\n%s\n", roff(f.Path), roff(f.Doc))
	}
	b.WriteString("\n\n.SH EXIT STATUS\n")
	for _, s := range cli.ExitStatuses() {
		fmt.Fprintf(&b, ".TP\n\\fB%d\\fP\n%s\n", s.Status, roff(s.Meaning))
	}
	b.WriteString("\n\n")
	return b.String()
}

// roff escapes text for a roff line: backslashes, and a leading dot or
// quote that would make the line a request.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
