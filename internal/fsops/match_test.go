package fsops

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dshfs/dsh-fs/internal/closest"
	"github.com/dshfs/dsh-fs/internal/text"
)

func TestIndexAll(t *testing.T) {
	tests := []struct {
		name    string
		content string
		old     string
		want    []int
	}{
		{"none", "abc", "x", nil},
		{"one", "abc", "b", []int{1}},
		{"several", "a.a.a", "a", []int{0, 2, 4}},
		// leftmost first, no overlaps: strings.Count counts "aa" in "aaaa" twice
		{"overlapping", "aaaa", "aa", []int{0, 2}},
		{"overlapping odd", "aaa", "aa", []int{0}},
		{"whole", "abc", "abc", []int{0}},
		{"longer than content", "ab", "abc", nil},
		{"empty old", "abc", "", nil},
		{"empty content", "", "a", nil},
		{"at the end", "xxab", "ab", []int{2}},
		{"newlines", "a\nb\na\nb", "a\nb", []int{0, 4}},
		{"crlf not lf", "a\r\nb", "a\nb", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := indexAll([]byte(tc.content), tc.old)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("indexAll(%q, %q) = %v, want %v", tc.content, tc.old, got, tc.want)
			}
			if tc.old != "" && len(got) != strings.Count(tc.content, tc.old) {
				t.Errorf("indexAll found %d, strings.Count %d", len(got), strings.Count(tc.content, tc.old))
			}
		})
	}
}

func TestToCRLF(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"abc", "abc"},
		{"\n", "\r\n"},
		{"a\nb\n", "a\r\nb\r\n"},
		{"\n\n", "\r\n\r\n"},
		// already CRLF: left alone, never "\r\r\n"
		{"a\r\nb", "a\r\nb"},
		{"a\r\nb\nc", "a\r\nb\r\nc"},
		// a lone "\r" is not a line ending and stays as it is
		{"a\rb", "a\rb"},
		{"\r", "\r"},
		{"\r\r\n", "\r\r\n"},
	}
	for _, tc := range tests {
		if got := toCRLF(tc.in); got != tc.want {
			t.Errorf("toCRLF(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := toCRLF(toCRLF(tc.in)); got != tc.want {
			t.Errorf("toCRLF is not idempotent on %q: %q", tc.in, got)
		}
	}
}

func TestHasBareLF(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"abc", false},
		{"\n", true},
		{"a\nb", true},
		{"a\r\nb", false},
		{"a\r\nb\n", true},
		{"\r\n\r\n", false},
		{"\n\r\n", true},
	}
	for _, tc := range tests {
		if got := hasBareLF(tc.in); got != tc.want {
			t.Errorf("hasBareLF(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestLocate(t *testing.T) {
	tests := []struct {
		name     string
		content  string
		old, new string
		at       []int
		lines    []int
		want     string
	}{
		{
			name: "unique", content: "one\ntwo\nthree\n", old: "two", new: "2",
			at: []int{4}, lines: []int{2}, want: "one\n2\nthree\n",
		},
		{
			name: "several", content: "x\ny\nx\nx\n", old: "x", new: "z",
			at: []int{0, 4, 6}, lines: []int{1, 3, 4}, want: "z\ny\nz\nz\n",
		},
		{
			name: "two on one line", content: "abab\n", old: "ab", new: "c",
			at: []int{0, 2}, lines: []int{1, 1}, want: "cc\n",
		},
		{
			name: "none", content: "abc\n", old: "x", new: "y",
			at: nil, lines: []int{}, want: "abc\n",
		},
		{
			name: "delete", content: "a\nb\nc\n", old: "b\n", new: "",
			at: []int{2}, lines: []int{2}, want: "a\nc\n",
		},
		{
			name: "grow", content: "a", old: "a", new: "aaaa",
			at: []int{0}, lines: []int{1}, want: "aaaa",
		},
		{
			name: "new contains old", content: "a a", old: "a", new: "aa",
			at: []int{0, 2}, lines: []int{1, 1}, want: "aa aa",
		},
		{
			name: "multi-line old", content: "a\nb\nc\nb\nc\n", old: "b\nc", new: "X",
			at: []int{2, 6}, lines: []int{2, 4}, want: "a\nX\nX\n",
		},
		{
			name:    "crlf file, old and new typed with LF",
			content: "a\r\nb\r\nc\r\n", old: "a\nb", new: "x\ny\nz",
			at: []int{0}, lines: []int{1}, want: "x\r\ny\r\nz\r\nc\r\n",
		},
		{
			name:    "crlf file, old ends with LF",
			content: "a\r\nb\r\nc\r\n", old: "b\n", new: "",
			at: []int{3}, lines: []int{2}, want: "a\r\nc\r\n",
		},
		{
			name:    "crlf file, old and new typed with CRLF",
			content: "a\r\nb\r\n", old: "a\r\nb", new: "x\r\ny",
			at: []int{0}, lines: []int{1}, want: "x\r\ny\r\n",
		},
		{
			name:    "crlf file, new already CRLF",
			content: "a\r\nb\r\n", old: "a\nb", new: "x\r\ny",
			at: []int{0}, lines: []int{1}, want: "x\r\ny\r\n",
		},
		{
			// new's line break is written as the file writes them.
			name:    "crlf file, old without a line break",
			content: "a\r\nb\r\n", old: "b", new: "c\nd",
			at: []int{3}, lines: []int{2}, want: "a\r\nc\r\nd\r\n",
		},
		{
			name:    "crlf file, several",
			content: "a\r\nb\r\na\r\nb\r\n", old: "a\nb", new: "c",
			at: []int{0, 6}, lines: []int{1, 3}, want: "c\r\nc\r\n",
		},
		{
			// the exact old wins: the LF part of a mixed file is edited as typed
			name:    "mixed file, exact match first",
			content: "a\r\nb\r\na\nb\n", old: "a\nb", new: "c\nd",
			at: []int{6}, lines: []int{3}, want: "a\r\nb\r\nc\nd\n",
		},
		{
			name:    "lf file, old typed with CRLF",
			content: "a\nb\n", old: "a\r\nb", new: "c",
			at: nil, lines: []int{}, want: "a\nb\n",
		},
		{
			name:    "bom kept",
			content: "\uFEFFfirst\nsecond\n", old: "first", new: "1st",
			at: []int{3}, lines: []int{1}, want: "\uFEFF1st\nsecond\n",
		},
		{
			name:    "bom and crlf",
			content: "\uFEFFa\r\nb\r\n", old: "a\nb", new: "x\ny",
			at: []int{3}, lines: []int{1}, want: "\uFEFFx\r\ny\r\n",
		},
		{
			name:    "no final newline",
			content: "a\nb", old: "b", new: "c",
			at: []int{2}, lines: []int{2}, want: "a\nc",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := locate([]byte(tc.content), tc.old, tc.new)
			if !reflect.DeepEqual(sp.at, tc.at) {
				t.Errorf("at = %v, want %v", sp.at, tc.at)
			}
			if got := sp.lines(); !reflect.DeepEqual(got, tc.lines) {
				t.Errorf("lines() = %v, want %v", got, tc.lines)
			}
			if got := string(sp.bytes()); got != tc.want {
				t.Errorf("bytes() = %q, want %q", got, tc.want)
			}
			if sp.size() != len(tc.want) {
				t.Errorf("size() = %d, want %d", sp.size(), len(tc.want))
			}
			var b bytes.Buffer
			n, err := sp.writeTo(&b)
			if err != nil || n != int64(len(tc.want)) || b.String() != tc.want {
				t.Errorf("writeTo = %d, %v, %q; want %d, nil, %q", n, err, b.String(), len(tc.want), tc.want)
			}
			if string(sp.content) != tc.content {
				t.Errorf("locate changed its content: %q", sp.content)
			}
		})
	}
}

// TestLocateCRLFLineStart pins CRLF files edited with an old text that
// starts with its "\n": that "\n" is the second half of a "\r\n" in the
// file, so the exact old matches and new is inserted as typed.
func TestLocateCRLFLineStart(t *testing.T) {
	tests := []struct {
		name, content, old, new, want, why string
	}{
		{"insert a line", "a\r\nb\r\n", "\nb", "\nb\nc", "a\r\nb\r\nc\r\n",
			"new is written as typed and the CRLF file gets a bare LF"},
		{"join lines", "a\r\nb\r\n", "\nb", "B", "aB\r\n",
			"the \"\\r\" of the removed line break is left alone"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := locate([]byte(tc.content), tc.old, tc.new)
			if got := string(sp.bytes()); got != tc.want {
				t.Errorf("locate(%q, %q, %q) = %q, want %q: %s", tc.content, tc.old, tc.new, got, tc.want, tc.why)
			}
		})
	}
}

// errWriter fails after n bytes.
type errWriter struct{ n int }

var errMatchTestWrite = errors.New("disk full")

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		m := w.n
		w.n = 0
		return m, errMatchTestWrite
	}
	w.n -= len(p)
	return len(p), nil
}

func TestSpliceWriteToError(t *testing.T) {
	sp := locate([]byte("aaa-bbb-aaa-ccc"), "aaa", "XY")
	full := string(sp.bytes())
	for limit := 0; limit < len(full); limit++ {
		n, err := sp.writeTo(&errWriter{n: limit})
		if !errors.Is(err, errMatchTestWrite) {
			t.Fatalf("limit %d: err = %v, want the writer's error", limit, err)
		}
		if n != int64(limit) {
			t.Errorf("limit %d: writeTo reported %d bytes", limit, n)
		}
	}
	if n, err := sp.writeTo(&errWriter{n: len(full)}); err != nil || n != int64(len(full)) {
		t.Errorf("exact fit: %d, %v", n, err)
	}
}

// refLines is the 1-based line of each offset, counted the slow way.
func refLines(content string, at []int) []int {
	out := make([]int, len(at))
	for k, i := range at {
		out[k] = strings.Count(content[:i], "\n") + 1
	}
	return out
}

// checkSplice asserts what every splice must satisfy, whatever matched.
func checkSplice(t *testing.T, sp splice, content string) {
	t.Helper()
	got := sp.bytes()
	if sp.size() != len(got) {
		t.Fatalf("size() = %d, len(bytes()) = %d", sp.size(), len(got))
	}
	var b bytes.Buffer
	if n, err := sp.writeTo(&b); err != nil || n != int64(len(got)) || !bytes.Equal(b.Bytes(), got) {
		t.Fatalf("writeTo = %d, %v; differs from bytes()", n, err)
	}
	if l := sp.lines(); !reflect.DeepEqual(l, refLines(content, sp.at)) {
		t.Fatalf("lines() = %v, want %v", l, refLines(content, sp.at))
	}
	if string(sp.content) != content {
		t.Fatalf("locate changed its content")
	}
	for k := 1; k < len(sp.at); k++ {
		if sp.at[k] < sp.at[k-1]+sp.oldLen {
			t.Fatalf("matches overlap or are out of order: %v (old is %d bytes)", sp.at, sp.oldLen)
		}
	}
}

// FuzzLocate checks locate against strings.Count and strings.Replace: as
// typed when old occurs in content, and with every "\n" written "\r\n"
// when a CRLF file is edited with "\n"-typed text.
func FuzzLocate(f *testing.F) {
	seeds := []struct{ content, old, new string }{
		{"one\ntwo\nthree\n", "two", "2"},
		{"aaaa", "aa", "b"},
		{"abab", "ab", "ba"},
		{"a\nb\na\nb", "a\nb", "c\nd"},
		{"a\nb\nc\n", "b\n", ""},
		{"\ttabbed\n", "    tabbed", "x"},
		{"trailing  \nspace\n", "trailing\nspace", "x"},
		{"say(\u201chi\u201d)\n", "say(\"hi\")", "x"},
		{"\uFEFFfirst\nsecond\n", "first", "1st"},
		{"\uFEFFa\nb\n", "a\nb", "x\ny"},
		{"a\nb", "b", "c\n"},
		{"\n\n\n", "\n", "\n\n"},
		{"x\n", "\n", "y"},
		{"a\nb\n", "a\r\nb", "c"},
		{"a\r\nb\n", "\r", ""},
		{"../../x\x00y", "\x00", "z"},
		{"\xef\xbb\xbfa", "\xef\xbb", "x"},
		{"", "a", "b"},
	}
	for _, s := range seeds {
		f.Add(s.content, s.old, s.new)
	}
	f.Fuzz(func(t *testing.T, content, old, new string) {
		if old == "" {
			return // checkEdits refuses it before locate
		}
		// against a reference of the contract: a file whose every line
		// ends in CRLF is edited with old and new in CRLF; any other file
		// as typed, and, failing that, in CRLF when it has some.
		sp := locate([]byte(content), old, new)
		checkSplice(t, sp, content)
		got := string(sp.bytes())
		refOld, refNew := old, new
		switch {
		case text.LineEndings([]byte(content)) == "crlf":
			refOld, refNew = toCRLF(old), toCRLF(new)
		case !strings.Contains(content, old) && strings.Contains(content, "\r\n") && hasBareLF(old):
			refOld, refNew = toCRLF(old), toCRLF(new)
		}
		if len(sp.at) != strings.Count(content, refOld) {
			t.Fatalf("locate(%q, %q) found %d, strings.Count(%q) %d", content, old, len(sp.at), refOld, strings.Count(content, refOld))
		}
		if want := strings.Replace(content, refOld, refNew, -1); got != want {
			t.Fatalf("locate(%q, %q, %q) = %q, want %q", content, old, new, got, want)
		}

		// the BOM survives any old text that does not itself hold it
		if strings.HasPrefix(content, "\uFEFF") && utf8.ValidString(old) && !strings.Contains(old, "\uFEFF") &&
			!strings.HasPrefix(got, "\uFEFF") {
			t.Fatalf("locate(%q, %q, %q) = %q lost the BOM", content, old, new, got)
		}

		// a CRLF file edited with "\n"-typed text: made from an LF text
		// with no "\r" of its own, it must be edited as the LF text is,
		// and stay CRLF.
		if strings.Contains(content, "\r") || strings.Contains(old, "\r") || strings.Contains(new, "\r") {
			return
		}
		lf, crlf := content, toCRLF(content)
		if !strings.Contains(lf, "\n") {
			return // no line ending to keep
		}
		k := strings.Count(lf, old)
		sp = locate([]byte(crlf), old, new)
		checkSplice(t, sp, crlf)
		if len(sp.at) != k {
			t.Fatalf("CRLF file %q, old %q: %d matches, the LF file has %d", crlf, old, len(sp.at), k)
		}
		if want := toCRLF(strings.Replace(lf, old, new, -1)); string(sp.bytes()) != want {
			t.Fatalf("CRLF file %q, old %q, new %q: got %q, want %q", crlf, old, new, sp.bytes(), want)
		}
		if k > 0 && hasBareLF(string(sp.bytes())) {
			t.Fatalf("CRLF file %q edited to %q: it has a bare LF", crlf, sp.bytes())
		}
	})
}

// FuzzLocateEncoded checks matching in a file of another encoding against
// the reference on its UTF-8 text: as many matches as strings.Count, and
// the edited file decodes to strings.Replace of the text. A match at an
// odd offset of UTF-16, or inside a character, would break either.
func FuzzLocateEncoded(f *testing.F) {
	for _, seed := range [][3]string{
		{"café\n€ one\ntwo\n", "€ one", "€ ONE ü"},
		{"\u0100\u0001\u0101", "\u0101", "x"},
		{"ĀāĀā", "ā", "ĀĀ"},
		{"a😀b😀", "😀", "c"},
		{"\u010a\n\n", "\n", "\n\n"},
		{"aaaa", "aa", "a"},
	} {
		f.Add(seed[0], seed[1], seed[2], uint8(0))
		f.Add(seed[0], seed[1], seed[2], uint8(1))
		f.Add(seed[0], seed[1], seed[2], uint8(2))
	}
	encs := []text.Encoding{text.UTF16LE, text.UTF16BE, text.Windows1252}
	f.Fuzz(func(t *testing.T, content, old, new string, which uint8) {
		enc := encs[int(which)%len(encs)]
		// The reference knows nothing of CRLF, a BOM or invalid text.
		if old == "" || strings.ContainsAny(content+old+new, "\r\ufeff") {
			return
		}
		raw, err := enc.Encode(content)
		if err != nil {
			return
		}
		bom := map[text.Encoding]string{text.UTF16LE: "\xff\xfe", text.UTF16BE: "\xfe\xff"}[enc]
		file := append([]byte(bom), raw...)
		if got, binary := text.Detect(file); binary || (got != enc && !(enc == text.Windows1252 && got.IsUTF8())) {
			return // 1252 text that happens to be valid UTF-8 is UTF-8
		}
		sp, err := locateIn(file, enc, old, new)
		if err != nil {
			if _, e := enc.Encode(new); e == nil {
				t.Fatalf("locateIn(%q, %s, %q, %q): %v", content, enc, old, new, err)
			}
			return
		}
		if _, e := enc.Encode(old); e != nil {
			if len(sp.at) != 0 {
				t.Fatalf("%q, which %s cannot store, matched %v", old, enc, sp.at)
			}
			return
		}
		if want := strings.Count(content, old); len(sp.at) != want {
			t.Fatalf("locateIn(%q, %s, %q) found %d, strings.Count %d", content, enc, old, len(sp.at), want)
		}
		edited := sp.bytes()
		if !bytes.HasPrefix(edited, []byte(bom)) {
			t.Fatalf("the BOM was lost: %q", edited)
		}
		if got, want := string(enc.Decode(edited)), strings.ReplaceAll(content, old, new); got != want {
			t.Fatalf("locateIn(%q, %s, %q, %q) decodes to %q, want %q", content, enc, old, new, got, want)
		}
	})
}

// TestFindClosestTextCopies checks the promise of the hint: detail.closest.text
// copied into old matches the file.
func TestFindClosestTextCopies(t *testing.T) {
	tests := []struct{ content, old string }{
		{"func f() {\n\tif x {\n\t\treturn 1\n\t}\n}\n", "    if x {\n        return 1\n    }"},
		{"alpha\nbeta  \ngamma\n", "beta\ngamma"},
		{"print(\"hello\")\n", "print(\u201chello\u201d)"},
		{"one \r\ntwo\r\n", "one\ntwo"},
		{"x := foo(a,  b)\n", "x := foo(a, b)"},
	}
	for _, tc := range tests {
		c := closest.Find([]byte(tc.content), tc.old)
		if c == nil {
			t.Errorf("closest.Find(%q, %q) = nil", tc.content, tc.old)
			continue
		}
		if sp := locate([]byte(tc.content), c.Text, "x"); len(sp.at) != 1 {
			t.Errorf("closest text %q of %q matches %d times, want once", c.Text, tc.content, len(sp.at))
		}
	}
}
