package closest

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFindClosest(t *testing.T) {
	tests := []struct {
		name    string
		content string
		old     string
		want    *Region // nil: nothing is close
		// bug, when set, names a known bug: a mismatch skips instead of
		// failing, so the suite stays green until the fix lands.
		bug string
	}{
		{
			name:    "tabs vs spaces",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			old:     "    if x {\n        return 1\n    }",
			want: &Region{StartLine: 2, EndLine: 4,
				Differences: []string{"indentation: the file uses tabs, old uses spaces"},
				Text:        "\tif x {\n\t\treturn 1\n\t}"},
		},
		{
			name:    "spaces vs tabs",
			content: "def f():\n    if x:\n        return 1\n",
			old:     "\tif x:\n\t\treturn 1\n",
			want: &Region{StartLine: 2, EndLine: 3,
				Differences: []string{"indentation: the file uses spaces, old uses tabs"},
				Text:        "    if x:\n        return 1"},
		},
		{
			name:    "tabs vs spaces, one line",
			content: "func f() {\n\treturn 1\n}\n",
			old:     "    return 1",
			want: &Region{StartLine: 2, EndLine: 2,
				Differences: []string{"indentation: the file uses tabs, old uses spaces"},
				Text:        "\treturn 1"},
		},
		{
			name:    "indentation depth",
			content: "a:\n  b:\n    c: 1\n",
			old:     "a:\n    b:\n        c: 1",
			want: &Region{StartLine: 1, EndLine: 3,
				Differences: []string{"indentation depth"},
				Text:        "a:\n  b:\n    c: 1"},
		},
		{
			name:    "trailing spaces in the file",
			content: "alpha\nbeta  \ngamma\n",
			old:     "beta\ngamma",
			want: &Region{StartLine: 2, EndLine: 3,
				Differences: []string{"trailing white space"},
				Text:        "beta  \ngamma"},
		},
		{
			name:    "trailing spaces in old",
			content: "alpha\nbeta\ngamma\n",
			old:     "alpha\t\nbeta \ngamma",
			want: &Region{StartLine: 1, EndLine: 3,
				Differences: []string{"trailing white space"},
				Text:        "alpha\nbeta\ngamma"},
		},
		{
			name:    "curly quotes in old",
			content: "print(\"hello\")\n",
			old:     "print(\u201chello\u201d)",
			want: &Region{StartLine: 1, EndLine: 1,
				Differences: []string{"quotes: curly in one, straight in the other"},
				Text:        "print(\"hello\")"},
		},
		{
			name:    "curly quotes in the file",
			content: "msg := \"it\u2019s\"\nnext\n",
			old:     "msg := \"it's\"\nnext",
			want: &Region{StartLine: 1, EndLine: 2,
				Differences: []string{"quotes: curly in one, straight in the other"},
				Text:        "msg := \"it\u2019s\"\nnext"},
		},
		{
			name:    "inner white space",
			content: "x := foo(a,  b)\n",
			old:     "x := foo(a, b)",
			want: &Region{StartLine: 1, EndLine: 1,
				Differences: []string{"white space inside lines"},
				Text:        "x := foo(a,  b)"},
		},
		{
			name:    "crlf old against an lf file",
			content: "one\ntwo\nthree\n",
			old:     "one\r\ntwo",
			want: &Region{StartLine: 1, EndLine: 2,
				Differences: []string{"line endings: old has CRLF, the file LF"},
				Text:        "one\ntwo"},
		},
		{
			name:    "lf old with trailing space against a crlf file",
			content: "one \r\ntwo\r\n",
			old:     "one\ntwo",
			want: &Region{StartLine: 1, EndLine: 2,
				Differences: []string{"trailing white space"},
				Text:        "one \ntwo"},
		},
		{
			name:    "one-line fragment inside a longer line",
			content: "if ok {\n\treturn compute(x,  y) // done\n}\n",
			old:     "compute(x, y)",
			want: &Region{StartLine: 2, EndLine: 2,
				Differences: []string{"white space inside lines"},
				Text:        "\treturn compute(x,  y) // done"},
			bug: "a one-line old that starts inside the line is held to the line's indentation: " +
				"\"indentation\" is reported and the real difference is not",
		},
		{
			name:    "one-line fragment with curly quotes",
			content: "\tlog.Print(\"done\") // ok\n",
			old:     "Print(\u201cdone\u201d)",
			want: &Region{StartLine: 1, EndLine: 1,
				Differences: []string{"quotes: curly in one, straight in the other"},
				Text:        "\tlog.Print(\"done\") // ok"},
			bug: "a one-line old that starts inside the line is held to the line's indentation",
		},
		{
			name:    "old starts and ends inside lines",
			content: "a := 1; b := 2\n\tc := 3; d := 4\n",
			old:     "b := 2\n    c := 3",
			want: &Region{StartLine: 1, EndLine: 2,
				Differences: []string{"indentation: the file uses tabs, old uses spaces"},
				Text:        "a := 1; b := 2\n\tc := 3; d := 4"},
		},
		{
			name:    "partial: the first two of three lines match",
			content: "a\nb\nc\nd\n",
			old:     "a\nb\nX",
			want: &Region{StartLine: 1, EndLine: 3, Partial: true, MatchedLines: 2,
				Differences: []string{`line 3 of the file differs from line 3 of old: file has "c", old has "X"`},
				Text:        "a\nb\nc"},
		},
		{
			name:    "partial: the longest run wins",
			content: "f(\ng(\nx\nf(\ng(\nh(\ny\n",
			old:     "f(\ng(\nh(\nz",
			want: &Region{StartLine: 4, EndLine: 7, Partial: true, MatchedLines: 3,
				Differences: []string{`line 7 of the file differs from line 4 of old: file has "y", old has "z"`},
				Text:        "f(\ng(\nh(\ny"},
		},
		{
			name:    "partial: the file ends, no final newline",
			content: "a\nb\nc",
			old:     "b\nc\nd",
			want: &Region{StartLine: 2, EndLine: 3, Partial: true, MatchedLines: 2,
				Differences: []string{"the file ends after line 3; old goes on"},
				Text:        "b\nc"},
		},
		{
			name:    "partial: the file ends, with a final newline",
			content: "a\nb\nc\n",
			old:     "b\nc\nd",
			want: &Region{StartLine: 2, EndLine: 3, Partial: true, MatchedLines: 2,
				Differences: []string{"the file ends after line 3; old goes on"},
				Text:        "b\nc"},
			bug: "the empty string after the final newline counts as a line 4 of the file",
		},
		{
			name:    "literal \\t and \\n where the file has a tab and a line break",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			old:     `\tif x {\n\t\treturn 1\n\t}`,
			want: &Region{StartLine: 2, EndLine: 4,
				Differences: []string{`old holds the literal escape \t where the file has a tab`, `old holds the literal escape \n where the file has a line break`},
				Text:        "\tif x {\n\t\treturn 1\n\t}", LiteralEscapes: true},
		},
		{
			name:    "literal escapes and spaces for tabs",
			content: "func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n",
			old:     `    if x {\n        return 1`,
			want: &Region{StartLine: 2, EndLine: 3,
				Differences: []string{`old holds the literal escape \n where the file has a line break`, "indentation: the file uses tabs, old uses spaces"},
				Text:        "\tif x {\n\t\treturn 1", LiteralEscapes: true},
		},
		{
			name:    "an escaped backslash stays a backslash",
			content: "s := \"a\\\\b\"\n",
			old:     `s := \"a\\\\b\"`,
			want: &Region{StartLine: 1, EndLine: 1,
				Differences: []string{`old holds the literal escape \" where the file has "`, `old holds the literal escape \\ where the file has a single backslash`},
				Text:        "s := \"a\\\\b\"", LiteralEscapes: true},
		},
		{
			name:    "a surrogate pair",
			content: "// 😀 ok\n",
			old:     `// \ud83d\ude00 ok`,
			want: &Region{StartLine: 1, EndLine: 1,
				Differences: []string{`old holds the literal escape \ud83d\ude00 where the file has 😀`},
				Text:        "// 😀 ok", LiteralEscapes: true},
		},
		{
			name:    "a backslash the file has too is no escape",
			content: "re := `\\d+\\s`\n",
			old:     "re := `\\d+\\s`  ",
			want: &Region{StartLine: 1, EndLine: 1,
				Differences: []string{"trailing white space"},
				Text:        "re := `\\d+\\s`"},
		},
		{
			name:    "literal escapes, partial",
			content: "func f() {\n\treturn 1\n}\n",
			old:     `func f() {\n\treturn 2\n}`,
			want: &Region{StartLine: 1, EndLine: 2, Partial: true, MatchedLines: 1,
				Differences: []string{`old holds the literal escape \n where the file has a line break`, `old holds the literal escape \t where the file has a tab`,
					`line 2 of the file differs from line 2 of old: file has "\treturn 1", old has "\treturn 2"`},
				Text: "func f() {\n\treturn 1", LiteralEscapes: true},
		},
		{name: "literal escapes, nothing close", content: "alpha\n", old: `beta\ngamma`},
		{name: "nothing close", content: "alpha\nbeta\n", old: "gamma"},
		{name: "nothing close, several lines", content: "alpha\nbeta\n", old: "gamma\ndelta"},
		{name: "old only white space", content: "a\n\nb\n", old: "   "},
		{name: "empty file", content: "", old: "a\nb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Find([]byte(tc.content), tc.old)
			if reflect.DeepEqual(got, tc.want) {
				return
			}
			t.Errorf("Find(%q, %q)\n got %+v\nwant %+v", tc.content, tc.old, got, tc.want)
		})
	}
}

func TestFindClosestBounded(t *testing.T) {
	t.Run("many lines", func(t *testing.T) {
		var file, old strings.Builder
		for i := range 100 {
			file.WriteString("\tline " + strings.Repeat("x", i) + "\n")
			old.WriteString("    line " + strings.Repeat("x", i) + "\n")
		}
		c := Find([]byte(file.String()), old.String())
		if c == nil {
			t.Fatal("Find = nil")
		}
		if c.StartLine != 1 || c.EndLine != 100 {
			t.Errorf("lines %d-%d, want 1-100", c.StartLine, c.EndLine)
		}
		if n := strings.Count(c.Text, "\n") + 1; n > closestMaxLines {
			t.Errorf("text has %d lines, want at most %d", n, closestMaxLines)
		}
		if len(c.Text) > closestMaxText {
			t.Errorf("text has %d bytes, want at most %d", len(c.Text), closestMaxText)
		}
		if !strings.HasPrefix(file.String(), c.Text) {
			t.Errorf("text is not the start of the region: %q", c.Text)
		}
	})
	t.Run("long lines cut at a rune", func(t *testing.T) {
		line := strings.Repeat("é", 3000) // 6000 bytes
		c := Find([]byte(line+"  \n"+line+"\n"), line+"\n"+line)
		if c == nil {
			t.Fatal("Find = nil")
		}
		if len(c.Text) > closestMaxText || len(c.Text) < closestMaxText-utf8.UTFMax {
			t.Errorf("text has %d bytes, want just under %d", len(c.Text), closestMaxText)
		}
		if !utf8.ValidString(c.Text) {
			t.Errorf("text cut inside a rune")
		}
	})
	t.Run("long partial line is clipped in the message", func(t *testing.T) {
		long := strings.Repeat("y", 500)
		c := Find([]byte("a\nb\n"+long+"\n"), "a\nb\nz")
		if c == nil || !c.Partial {
			t.Fatalf("Find = %+v, want a partial match", c)
		}
		if len(c.Differences) != 1 || len(c.Differences[0]) > 300 || !strings.Contains(c.Differences[0], "…") {
			t.Errorf("differences not clipped: %q", c.Differences)
		}
	})
	t.Run("huge file", func(t *testing.T) {
		big := []byte(strings.Repeat("\tx\n", closestMaxFile/3+1))
		if c := Find(big, "    x"); c != nil {
			t.Errorf("Find on %d bytes = %+v, want nil (too large to diagnose)", len(big), c)
		}
	})
}

func TestUnescapeLiteral(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		notes    int
	}{
		{`plain`, `plain`, 0},
		{`a\tb\nc\rd`, "a\tb\nc\rd", 3},
		{`\"q\" \'s\' \/ \\`, `"q" 's' / \`, 4},
		{`\u00e9\u00e9`, "éé", 1},
		{`\ud83d\ude00`, "😀", 1},
		{`\ud83d alone`, `\ud83d alone`, 0},
		{`\d \w \x41 \u12`, `\d \w \x41 \u12`, 0},
		{`trailing \`, `trailing \`, 0},
		{`\\n`, `\n`, 1},
	} {
		got, notes := unescapeLiteral(tc.in)
		if got != tc.want || len(notes) != tc.notes {
			t.Errorf("unescapeLiteral(%q) = %q, %d notes %q; want %q, %d notes", tc.in, got, len(notes), notes, tc.want, tc.notes)
		}
	}
}
