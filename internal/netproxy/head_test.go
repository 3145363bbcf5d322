package netproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
)

// TestReadHead: the heads HTTP/1.1 lets a client send are read, the
// start line and the fields as sent, and nothing past the empty line;
// every other head is refused with a headError whose text quotes none of
// the bytes read.
func TestReadHead(t *testing.T) {
	good := []struct {
		name, in, start string
		fields          []field
	}{
		{"crlf", "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A:  b c \t\r\n\r\nrest", "GET http://a.test/ HTTP/1.1",
			[]field{{"Host", "a.test"}, {"X-A", "b c"}}},
		{"lf", "CONNECT a.test:443 HTTP/1.0\nHost: a.test\n\nrest", "CONNECT a.test:443 HTTP/1.0", []field{{"Host", "a.test"}}},
		{"no fields", "GET http://a.test/ HTTP/1.1\r\n\r\nrest", "GET http://a.test/ HTTP/1.1", nil},
		{"empty value, tab, high bytes", "GET / HTTP/1.1\r\nX-E:\r\nX-T: a\tb\r\nX-U: caf\xc3\xa9\r\n\r\nrest", "GET / HTTP/1.1",
			[]field{{"X-E", ""}, {"X-T", "a\tb"}, {"X-U", "caf\xc3\xa9"}}},
		{"status line", "HTTP/1.1 200 Connection established\r\n\r\nrest", "HTTP/1.1 200 Connection established", nil},
		{"a long head within the bound", "GET / HTTP/1.1\r\nX-L: " + strings.Repeat("a", 60000) + "\r\n\r\nrest", "GET / HTTP/1.1",
			[]field{{"X-L", strings.Repeat("a", 60000)}}},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(strings.NewReader(tc.in))
			h, err := readHead(br)
			if err != nil {
				t.Fatal(err)
			}
			if h.start != tc.start || len(h.fields) != len(tc.fields) {
				t.Fatalf("got %q %q, want %q %q", h.start, h.fields, tc.start, tc.fields)
			}
			for i := range h.fields {
				if h.fields[i] != tc.fields[i] {
					t.Errorf("field %d: %q, want %q", i, h.fields[i], tc.fields[i])
				}
			}
			if rest, _ := io.ReadAll(br); string(rest) != "rest" {
				t.Errorf("left %q after the head, want %q", rest, "rest")
			}
		})
	}

	many := "GET / HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", maxHeadLines+1) + "\r\n"
	bad := []struct{ name, in, says string }{
		{"over-long line", "GET / HTTP/1.1\r\nX-L: " + strings.Repeat("a", maxHeadBytes) + "\r\n\r\n", "longer than 64 KiB"},
		{"over-long head", "GET / HTTP/1.1\r\n" + strings.Repeat("X-L: "+strings.Repeat("a", 1000)+"\r\n", 70) + "\r\n", "longer than 64 KiB"},
		{"too many lines", many, "more than 512 header lines"},
		{"a line without a colon", "GET / HTTP/1.1\r\nHost a.test\r\n\r\n", "without a colon"},
		{"space before the colon", "GET / HTTP/1.1\r\nHost : a.test\r\n\r\n", "not a token"},
		{"a name with a slash", "GET / HTTP/1.1\r\nX/Y: 1\r\n\r\n", "not a token"},
		{"an empty name", "GET / HTTP/1.1\r\n: 1\r\n\r\n", "not a token"},
		{"NUL in a value", "GET / HTTP/1.1\r\nX: a\x00b\r\n\r\n", "control byte"},
		{"a control byte in a value", "GET / HTTP/1.1\r\nX: a\x1bb\r\n\r\n", "control byte"},
		{"DEL in a value", "GET / HTTP/1.1\r\nX: a\x7f\r\n\r\n", "control byte"},
		{"a bare CR in a value", "GET / HTTP/1.1\r\nX: a\rInjected: 1\r\n\r\n", "control byte"},
		{"a bare CR ending a line", "GET / HTTP/1.1\rX: 1\r\n\r\n", "control byte"},
		{"a control byte in the start line", "GET /\x01 HTTP/1.1\r\n\r\n", "control byte"},
		{"obs-fold", "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "obs-fold"},
		{"obs-fold by tab", "GET / HTTP/1.1\r\nX: a\r\n\tb\r\n\r\n", "obs-fold"},
		{"ends in the fields", "GET / HTTP/1.1\r\nX: a\r\n", "ends before its empty line"},
		{"ends in a line", "GET / HTTP/1.1\r\nX: a", "ends before its empty line"},
		{"ends in the start line", "GET / HTT", "ends before its empty line"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readHead(bufio.NewReader(strings.NewReader(tc.in)))
			var he *headError
			if !errors.As(err, &he) || !strings.Contains(err.Error(), tc.says) {
				t.Fatalf("%v, want a headError saying %q", err, tc.says)
			}
		})
	}
	if _, err := readHead(bufio.NewReader(strings.NewReader(""))); err != errHeadEmpty {
		t.Errorf("an empty connection: %v, want errHeadEmpty", err)
	}
	// A value's bytes never appear in the error: an upstream's answer
	// may echo its credentials.
	if _, err := readHead(bufio.NewReader(strings.NewReader("HTTP/1.1 407 no\r\nX-Echo: Basic c2VjcmV0\x01\r\n\r\n"))); err == nil || strings.Contains(err.Error(), "c2VjcmV0") {
		t.Errorf("the error quotes the value: %v", err)
	}
}

// TestRequestAndStatusLine: the request line is three parts, a token
// method, a target and HTTP/1.x; the status line HTTP/1.x and three
// digits, a reason or none.
func TestRequestAndStatusLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		ok   bool
	}{
		{"GET http://a.test/ HTTP/1.1", true},
		{"CONNECT a.test:443 HTTP/1.0", true},
		{"GET http://a.test/", false},
		{"GET", false},
		{"GET  http://a.test/ HTTP/1.1", false},
		{"GET http://a.test/ HTTP/1.1 ", false},
		{"GET http://a.test/ HTTP/2.0", false},
		{"GET http://a.test/ HTTP/1.10", false},
		{"GET http://a.test/ http/1.1", false},
		{"G(T http://a.test/ HTTP/1.1", false},
		{"", false},
	} {
		_, _, _, err := (&head{start: tc.line}).requestLine()
		if (err == nil) != tc.ok {
			t.Errorf("request line %q: %v, want ok %t", tc.line, err, tc.ok)
		}
	}
	for _, tc := range []struct {
		line string
		code int
	}{
		{"HTTP/1.1 200 OK", 200},
		{"HTTP/1.0 200", 200},
		{"HTTP/1.1 407 Proxy Authentication Required", 407},
		{"HTTP/1.1 100 Continue", 100},
		{"HTTP/1.1 2000 OK", 0},
		{"HTTP/1.1 20 OK", 0},
		{"HTTP/1.1 099 x", 0},
		{"HTTP/1.1 +20 x", 0},
		{"HTTP/2 200 OK", 0},
		{"ICY 200 OK", 0},
		{"HTTP/1.1", 0},
	} {
		code, err := (&head{start: tc.line}).statusLine()
		if code != tc.code || (err == nil) != (tc.code != 0) {
			t.Errorf("status line %q: %d %v, want %d", tc.line, code, err, tc.code)
		}
	}
}

// TestProxyRefusesMalformedHead: a head the reader refuses gets a 400
// that says why, nothing is dialled, and the connection ends.
func TestProxyRefusesMalformedHead(t *testing.T) {
	p, err := New([]string{"a.test"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nX: a\rHost: b.test\r\n\r\n",
		"GET http://a.test/\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nBad Name: 1\r\n\r\n",
	} {
		p.decided = func(d Decision) { t.Errorf("%q: a decision was taken: %+v", in, d) }
		client, server := net.Pipe()
		go func() { defer server.Close(); p.Handle(server) }()
		go func() { io.WriteString(client, in) }()
		got, _ := io.ReadAll(client)
		client.Close()
		if !strings.HasPrefix(string(got), "HTTP/1.1 400 Bad Request\r\n") || !strings.Contains(string(got), "malformed message head") {
			t.Errorf("%q: %q, want a 400 saying the head is malformed", in, got)
		}
	}
}

// FuzzReadHead: whatever the bytes, a head the reader accepts has only
// token names and no control byte but HTAB in its values or start line,
// took no more than maxHeadBytes, and, written out again as the proxy
// writes heads, reads back the same: what the proxy checked is what a
// server gets.
func FuzzReadHead(f *testing.F) {
	for _, seed := range []string{
		"GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
		"CONNECT a.test:443 HTTP/1.1\n\n",
		"HTTP/1.1 200 OK\r\nX: a\tb\r\n\r\nbody",
		"GET / HTTP/1.1\r\nX: a\rInjected: 1\r\n\r\n",
		"GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n",
		"GET / HTTP/1.1\r\nX\x00: 1\r\n\r\n",
		"\r\n\r\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		sr := strings.NewReader(in)
		br := bufio.NewReader(sr)
		h, err := readHead(br)
		if err != nil {
			return
		}
		if used := len(in) - sr.Len() - br.Buffered(); used > maxHeadBytes {
			t.Fatalf("took %d bytes", used)
		}
		if checkText(h.start, false) != nil {
			t.Fatalf("start line %q", h.start)
		}
		var b strings.Builder
		b.WriteString(h.start + "\r\n")
		for _, fl := range h.fields {
			if !isToken(fl.name) || checkText(fl.value, true) != nil || strings.Trim(fl.value, " \t") != fl.value {
				t.Fatalf("field %q", fl)
			}
			b.WriteString(fl.name + ": " + fl.value + "\r\n")
		}
		b.WriteString("\r\n")
		again, err := readHead(bufio.NewReader(strings.NewReader(b.String())))
		if err != nil || again.start != h.start || len(again.fields) != len(h.fields) {
			t.Fatalf("written out again: %v %+v, want %+v", err, again, h)
		}
		for i := range h.fields {
			if again.fields[i] != h.fields[i] {
				t.Fatalf("field %d: %q, want %q", i, again.fields[i], h.fields[i])
			}
		}
	})
}
