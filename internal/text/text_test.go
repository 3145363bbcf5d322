package text

import (
	"errors"
	"testing"
)

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

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // "binary" when not text
	}{
		{"empty", "", "utf-8"},
		{"plain", "x\n", "utf-8"},
		{"bom", "\xEF\xBB\xBFx", "utf-8-bom"},
		{"utf-16le", "\xFF\xFEa\x00\n\x00", "utf-16le"},
		{"utf-16be", "\xFE\xFF\x00a\x00\n", "utf-16be"},
		{"utf-16le surrogate pair", "\xFF\xFE\x3D\xD8\x00\xDE", "utf-16le"},
		{"utf-16le lone high surrogate", "\xFF\xFE\x3D\xD8a\x00", "binary"},
		{"utf-16le lone low surrogate", "\xFF\xFE\x00\xDE", "binary"},
		{"utf-16le odd length", "\xFF\xFEa\x00b", "binary"},
		{"nul", "a\x00b", "binary"},
		{"windows-1252", "caf\xE9 \x80\n", "windows-1252"},
		{"latin-1", "caf\xE9 \x81\n", "latin-1"},
		{"cut at the end", "caf\xC3", "windows-1252"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			enc, bin := Detect([]byte(tc.in))
			got := enc.String()
			if bin {
				got = "binary"
			}
			if got != tc.want {
				t.Errorf("Detect(%q) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
}

// TestSnifferChunks feeds a file split at every offset: a UTF-8 sequence
// or a UTF-16 unit cut by a chunk boundary decides nothing.
func TestSnifferChunks(t *testing.T) {
	for _, in := range []string{"h\xC3\xA9llo \xE2\x82\xAC\n", "h\xE9llo\n", "\xFF\xFEa\x00\x3D\xD8\x00\xDE", "\xEF\xBB\xBF\xF0\x9F\x98\x80"} {
		want, wantBin := Detect([]byte(in))
		for i := 0; i <= len(in); i++ {
			for j := i; j <= len(in); j++ {
				var s Sniffer
				s.Feed([]byte(in[:i]))
				s.Feed([]byte(in[i:j]))
				s.Feed([]byte(in[j:]))
				if got, bin := s.Result(); got != want || bin != wantBin {
					t.Errorf("%q split at %d, %d: %s %v, want %s %v", in, i, j, got, bin, want, wantBin)
				}
			}
		}
	}
}

func TestEncodeDecode(t *testing.T) {
	for _, tc := range []struct {
		enc  Encoding
		text string
		raw  string
	}{
		{UTF8, "é", "\xC3\xA9"},
		{UTF16LE, "a😀", "a\x00\x3D\xD8\x00\xDE"},
		{UTF16BE, "a\n", "\x00a\x00\n"},
		{Windows1252, "é€", "\xE9\x80"},
		{Latin1, "é\u0081", "\xE9\x81"},
	} {
		got, err := tc.enc.Encode(tc.text)
		if err != nil || string(got) != tc.raw {
			t.Errorf("%s.Encode(%q) = %q, %v, want %q", tc.enc, tc.text, got, err, tc.raw)
		}
		bom := map[Encoding]string{UTF16LE: "\xFF\xFE", UTF16BE: "\xFE\xFF"}[tc.enc]
		if back := tc.enc.Decode([]byte(bom + tc.raw)); string(back) != tc.text {
			t.Errorf("%s.Decode(%q) = %q, want %q", tc.enc, tc.raw, back, tc.text)
		}
	}
	for _, tc := range []struct {
		enc  Encoding
		text string
		bad  rune
	}{
		{Windows1252, "a€ƒ→", '→'},
		{Latin1, "é€", '€'},
	} {
		_, err := tc.enc.Encode(tc.text)
		var ue *UnencodableError
		if !errors.As(err, &ue) || ue.Rune != tc.bad {
			t.Errorf("%s.Encode(%q) = %v, want an error naming %q", tc.enc, tc.text, err, tc.bad)
		}
	}
}

func TestIndexAllAligned(t *testing.T) {
	// "\u0100\u0001" in UTF-16LE is 00 01 01 00: "\u0101" (01 01) occurs
	// at the odd offset 1 only, which is no match.
	b := []byte{0xFF, 0xFE, 0x00, 0x01, 0x01, 0x00, 0x01, 0x01}
	if got := UTF16LE.IndexAll(b, []byte{0x01, 0x01}, 2); len(got) != 1 || got[0] != 6 {
		t.Errorf("IndexAll = %v, want [6]", got)
	}
}

func TestLineEndings16(t *testing.T) {
	raw, _ := UTF16BE.Encode("a\r\nb\r\n\u0a0d")
	if got := UTF16BE.LineEndings(raw); got != "crlf" {
		t.Errorf("LineEndings = %s, want crlf", got)
	}
	raw, _ = UTF16LE.Encode("a\r\nb\n")
	if got := UTF16LE.LineEndings(raw); got != "mixed" {
		t.Errorf("LineEndings = %s, want mixed", got)
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

// TestCutLine checks that a cut never splits a character and is marked,
// and that a line within the bound is left whole.
func TestCutLine(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"within", "hello", 5, "hello"},
		{"ascii cut", "hello world", 5, "hello" + Ellipsis},
		{"cut inside a character", "ab\u00e9cd", 3, "ab" + Ellipsis},
		{"cut after a character", "ab\u00e9cd", 4, "ab\u00e9" + Ellipsis},
		{"cut inside a 4-byte character", "a\U0001F600b", 3, "a" + Ellipsis},
		{"empty", "", 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CutLine([]byte(tc.in), tc.max); got != tc.want {
				t.Errorf("CutLine(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
			}
		})
	}
}
