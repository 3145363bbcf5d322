package text

import "testing"

func TestIsBinary(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"empty", "", false},
		{"ascii", "hello\n", false},
		{"utf-8", "héllo wörld ✓\n", false},
		{"bom", "\xEF\xBB\xBFtext", false},
		{"nul", "a\x00b", true},
		{"invalid byte", "a\xffb", true},
		{"lone continuation", "a\x80b", true},
		{"sequence cut by the end of the sample", "ok \xE2\x9C", false},
		{"cut sequence before more text", "\xE2\x9C ok", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := IsBinary([]byte(tc.in)); got != tc.want {
				t.Errorf("IsBinary(%q) = %v, want %v", tc.in, got, tc.want)
			}
		})
	}
}

func TestEncoding(t *testing.T) {
	if got := Encoding([]byte("\xEF\xBB\xBFx")); got != "utf-8-bom" {
		t.Errorf("BOM: %q", got)
	}
	if got := Encoding([]byte("x")); got != "utf-8" {
		t.Errorf("plain: %q", got)
	}
}

func TestLineEndings(t *testing.T) {
	for in, want := range map[string]string{
		"":               "none",
		"one line":       "none",
		"a\nb\n":         "lf",
		"a\r\nb\r\n":     "crlf",
		"a\r\nb\n":       "mixed",
		"a\rb\r":         "none", // old Mac endings are not line breaks here
		"a\r\nb":         "crlf",
		"\n":             "lf",
		"x\r\n\r\ny\r\n": "crlf",
	} {
		if got := LineEndings([]byte(in)); got != want {
			t.Errorf("LineEndings(%q) = %q, want %q", in, got, want)
		}
	}
}
