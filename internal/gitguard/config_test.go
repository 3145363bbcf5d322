package gitguard

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// configCases are config texts whose entries ParseConfig must list as
// git does: sections, subsections, quotes, escapes, continuations,
// comments, case.
var configCases = []struct{ name, text string }{
	{"plain", "[core]\n\tbare = false\n\tfsmonitor = touch /tmp/x\n"},
	{"case-insensitive keys", "[CoRe]\n\tFSMonitor = x\n[Alias]\n\tST = !sh\n"},
	{"subsection keeps case", "[remote \"Origin\"]\n\turl = u\n[diff \"PDF\"]\n\ttextconv = pdftotext\n"},
	{"legacy subsection lowercased", "[Filter.LFS]\n\tclean = git-lfs clean\n"},
	{"subsection escapes", "[diff \"a\\\"b\\\\c\\d\"]\n\tcommand = x\n"},
	{"quoted value", "[core]\n\tpager = \"less  -R # not a comment\"\n"},
	{"partly quoted", "[core]\n\teditor = vim\" -u \"NONE  ; comment\n"},
	{"escapes", "[alias]\n\tx = \"!printf '\\\\t\\n'\"\n\ty = a\\tb\\nc\\bd\\\"\n"},
	{"continuation", "[core]\n\tsshCommand = ssh \\\n  -i key\\\n -v\n\tpager = less\n"},
	{"comments", "# top\n; also\n[core] ; there\n\tpager = less # trailing\n\t# fsmonitor = x\n"},
	{"entry on the header line", "[core] fsmonitor = x\n[alias]st=!sh\n"},
	{"no value", "[core]\n\tbare\n\tfilemode\t\n"},
	{"empty value", "[core]\n\tpager =\n\teditor = \"\"\n"},
	{"blanks kept inside", "[core]\n\tpager = a  \t b   \n"},
	{"crlf", "[core]\r\n\tpager = less\r\n\teditor = vi \\\r\n -x\r\n"},
	{"bom", "\xef\xbb\xbf[core]\n\tpager = less\n"},
	{"includes", "[include]\n\tpath = other\n[includeIf \"gitdir:~/w/\"]\n\tpath = ../x.inc\n"},
	{"no final newline", "[core]\n\tpager = less"},
	{"dashes and digits", "[sec-1]\n\tkey-2 = v\n"},
	{"header blanks", "[diff   \"x\"]\n\ttextconv = t\n"},
	{"backslash at the end", "[core]\n\tpager = less \\"},
	{"key before any section", "pager = x\n[core]\n\tpager = y\n"},
	{"value spacing", "[a]\n\tk=   v   \n\tl =\"  q  \"  \n"},
}

// gitList is `git config -z --list --file` of path: git's own reading,
// the oracle for ParseConfig.
func gitList(t *testing.T, path string) []string {
	t.Helper()
	out, err := exec.Command("git", "config", "-z", "--no-includes", "--list", "--file", path).Output()
	if err != nil {
		t.Fatalf("git config --list: %v", err)
	}
	var list []string
	for _, rec := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		if rec != "" {
			list = append(list, rec)
		}
	}
	return list
}

func TestParseConfigAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here to compare with")
	}
	for _, tc := range configCases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			entries, err := ParseConfig([]byte(tc.text))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			var got []string
			for _, e := range entries {
				rec := e.Key()
				if e.HasValue {
					rec += "\n" + e.Value
				}
				got = append(got, rec)
			}
			want := gitList(t, path)
			if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("parsed\n%q\ngit lists\n%q", got, want)
			}
		})
	}
}

// TestParseConfigRefusesWhatGitRefuses: text git cannot read is an error,
// never an empty list, so a planted entry cannot hide behind a syntax git
// reads one way and the guard another.
func TestParseConfigRefusesWhatGitRefuses(t *testing.T) {
	haveGit := exec.Command("git", "--version").Run() == nil
	for _, text := range []string{
		"[core\n\tpager = x\n",
		"[core]\n\tpager = \"x\n",
		"[core]\n\tpager = x\\q\n",
		"[core]\n\tpager # c\n",
		"[core \"x]\n",
		"[core \"x\"\n",
		"[co re]\n",
		"[core]\n\t1pager = x\n",
		"[]\n\tk = v\n",
	} {
		if _, err := ParseConfig([]byte(text)); err == nil {
			t.Errorf("ParseConfig(%q) took it", text)
		}
		if haveGit {
			path := filepath.Join(t.TempDir(), "config")
			os.WriteFile(path, []byte(text), 0o644)
			if exec.Command("git", "config", "--list", "--file", path).Run() == nil {
				t.Errorf("git reads %q: the case is wrong", text)
			}
		}
	}
}

// TestParseConfigSpans: cutting an entry's span out leaves a file git
// reads as the same list without that entry, and every other byte as it
// was.
func TestParseConfigSpans(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here to compare with")
	}
	for _, tc := range configCases {
		entries, err := ParseConfig([]byte(tc.text))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range entries {
			cut, err := removeEntries([]byte(tc.text), entries[i:i+1])
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			path := filepath.Join(t.TempDir(), "config")
			os.WriteFile(path, cut, 0o644)
			want := gitList(t, filepath.Join(writeTemp(t, tc.text), "config"))
			want = append(want[:i:i], want[i+1:]...)
			if got := gitList(t, path); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Errorf("%s without entry %d (%s):\n%q\ngit lists %q, want %q", tc.name, i, entries[i].Key(), cut, got, want)
			}
			lineStart := strings.LastIndexByte(tc.text[:entries[i].Start], '\n') + 1
			if !bytes.HasPrefix(cut, []byte(tc.text[:lineStart])) || !bytes.HasSuffix(cut, []byte(tc.text[entries[i].End:])[min(len(tc.text)-entries[i].End, strings.IndexByte(tc.text[entries[i].End:]+"\n", '\n')+1):]) {
				t.Errorf("%s: the bytes before entry %d changed", tc.name, i)
			}
		}
	}
}

func writeTemp(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// FuzzParseConfig: whatever the text, the entries ParseConfig returns
// lie in order inside it, and cutting any of them leaves text that parses
// to the others, with the same keys and values.
func FuzzParseConfig(f *testing.F) {
	for _, tc := range configCases {
		f.Add(tc.text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		entries, err := ParseConfig([]byte(text))
		if err != nil {
			return
		}
		at := 0
		for _, e := range entries {
			if e.Start < at || e.End < e.Start || e.End > len(text) {
				t.Fatalf("entry %s spans [%d,%d) after %d in %d bytes", e.Key(), e.Start, e.End, at, len(text))
			}
			at = e.End
		}
		for i := range entries {
			cut, err := removeEntries([]byte(text), entries[i:i+1])
			if err != nil {
				t.Fatal(err)
			}
			rest, err := ParseConfig(cut)
			if err != nil {
				t.Fatalf("without %s, %q does not parse: %v", entries[i].Key(), cut, err)
			}
			want := slices.Delete(slices.Clone(entries), i, i+1)
			if len(rest) != len(want) {
				t.Fatalf("without %s: %d entries, want %d (%q)", entries[i].Key(), len(rest), len(want), cut)
			}
			for j := range rest {
				if rest[j].Key() != want[j].Key() || rest[j].Value != want[j].Value || rest[j].HasValue != want[j].HasValue {
					t.Fatalf("without %s: entry %d is %s=%q, want %s=%q (%q)", entries[i].Key(), j, rest[j].Key(), rest[j].Value, want[j].Key(), want[j].Value, cut)
				}
			}
		}
	})
}

// TestParseConfigRandomAsGit: configs put together at random from the
// pieces git's syntax is made of read as git reads them, or are refused
// where git refuses them.
func TestParseConfigRandomAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here to compare with")
	}
	pieces := []string{"[core]", "[Core \"Sub\"]", "[a.B]", "[x \"q\\\"z\"]", "\n", "\r\n", " ", "\t", "k", "Key-2", "=", " = ",
		"v", "\"", "\\", "\\n", "\\t", "\\\n", "#", ";", "!", "a b", "\"  \"", "[", "]", "é"}
	rnd := uint64(1)
	next := func(n int) int {
		rnd = rnd*6364136223846793005 + 1442695040888963407
		return int(rnd>>33) % n
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "config")
	for i := 0; i < 300; i++ {
		var b strings.Builder
		b.WriteString("[s]\n")
		for n := next(12) + 1; n > 0; n-- {
			b.WriteString(pieces[next(len(pieces))])
		}
		text := b.String()
		os.WriteFile(path, []byte(text), 0o644)
		out, gitErr := exec.Command("git", "config", "-z", "--no-includes", "--list", "--file", path).Output()
		entries, err := ParseConfig([]byte(text))
		if (err != nil) != (gitErr != nil) {
			t.Errorf("%q: ParseConfig error %v, git error %v", text, err, gitErr)
			continue
		}
		if err != nil {
			continue
		}
		var got []string
		for _, e := range entries {
			rec := e.Key()
			if e.HasValue {
				rec += "\n" + e.Value
			}
			got = append(got, rec+"\x00")
		}
		if strings.Join(got, "") != string(out) {
			t.Errorf("%q: parsed %q, git lists %q", text, strings.Join(got, ""), out)
		}
	}
}
