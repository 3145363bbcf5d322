package repo

import (
	"go/scanner"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
)

// directoryWord is the other word for a folder.
var directoryWord = regexp.MustCompile(`(?i)\bdirector(y|ies)\b`)

// directoryTerms are the names of things that are not "a folder" in
// general but one that another program or the kernel names so: git's
// directory (GIT_DIR), a process's working directory (getcwd), and
// ENOENT's text, each may be broken over two comment lines.
var directoryTerms = regexp.MustCompile(`(?i)\b(git|working|file or)(\s*//)?[\s-]+director(y|ies)\b`)

// dropInFiles hold the official MCP filesystem server's tool names,
// titles and texts, which the drop-in repeats as that server words them.
var dropInFiles = []string{"internal/mcpserver/dropin.go", "internal/mcpserver/server.go"}

// TestOneWordForAFolder: the code's comments and messages say "folder",
// never "directory", but in the names of directoryTerms,
// so a reader meets one word for one idea. The drop-in's strings are
// the official server's and may say what it says.
func TestOneWordForAFolder(t *testing.T) {
	t.Parallel()
	for _, f := range checkoutGoFiles(t) {
		if strings.HasSuffix(f, "_test.go") || strings.HasPrefix(f, "e2e/") {
			continue
		}
		src, err := os.ReadFile(filepath.Join(harness.RepoRoot, filepath.FromSlash(f)))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range directoryWords(f, src) {
			t.Errorf("%s: %q says directory: say folder (git's and a working directory aside)", w.pos, w.text)
		}
	}
}

// TestOneWordForAFolderCatches: the check finds the word in a comment and
// in a message, and lets the named terms and the drop-in's strings be.
func TestOneWordForAFolderCatches(t *testing.T) {
	t.Parallel()
	src := []byte("package p\n\n// Open opens the directory d.\nfunc Open() error { return errors.New(\"no such Directory\") }\n\n// the git directory and the working directory are terms.\nvar s = \"a git directory\"\n")
	got := directoryWords("internal/p/p.go", src)
	if len(got) != 2 || !strings.Contains(got[0].text, "opens the directory") || !strings.Contains(got[1].text, "no such Directory") {
		t.Fatalf("found %v, want the comment of Open and the message", got)
	}
	if got := directoryWords("internal/mcpserver/dropin.go", []byte("package p\n\nvar s = \"Allowed directories\"\n")); len(got) != 0 {
		t.Errorf("the drop-in's string was flagged: %v", got)
	}
	if got := directoryWords("internal/mcpserver/dropin.go", []byte("package p\n\n// lists a directory\nvar s = 1\n")); len(got) != 1 {
		t.Errorf("the drop-in's comment was let be: %v", got)
	}
}

type word struct {
	pos  string
	text string
}

// directoryWords are the comments and string literals of the Go file f
// that say directory outside the named terms: in the drop-in's files, its
// comments alone.
func directoryWords(f string, src []byte) []word {
	var found []word
	fset := token.NewFileSet()
	file := fset.AddFile(path.Base(f), -1, len(src))
	var s scanner.Scanner
	s.Init(file, src, nil, scanner.ScanComments)
	dropIn := false
	for _, d := range dropInFiles {
		dropIn = dropIn || f == d
	}
	// Consecutive line comments are one text: a term broken over two
	// lines is still the term.
	var group string
	groupPos, groupEnd := 0, -1
	flush := func() {
		if group != "" && directoryWord.MatchString(directoryTerms.ReplaceAllString(group, "")) {
			found = append(found, word{pos: f + ":" + strconv.Itoa(groupPos), text: firstLine(group)})
		}
		group = ""
	}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		line := fset.Position(pos).Line
		switch {
		case tok == token.COMMENT && line == groupEnd+1 && group != "":
			group += "\n" + lit
			groupEnd = line + strings.Count(lit, "\n")
		case tok == token.COMMENT:
			flush()
			group, groupPos, groupEnd = lit, line, line+strings.Count(lit, "\n")
		case tok == token.STRING && !dropIn:
			flush()
			if directoryWord.MatchString(directoryTerms.ReplaceAllString(lit, "")) {
				found = append(found, word{pos: f + ":" + strconv.Itoa(line), text: lit})
			}
		}
	}
	flush()
	return found
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if directoryWord.MatchString(directoryTerms.ReplaceAllString(l, "")) {
			return strings.TrimSpace(l)
		}
	}
	return s
}
