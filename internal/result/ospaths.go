package result

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/dshfs/dsh-fs/internal/fsys"
)

// Paths leave the fence here. Inside, every path is the fence's slash
// path ("/C:/ws/a.txt" on Windows, docs/design.md §4); what a result
// gives back is in the OS's own spelling (`C:\ws\a.txt`), so a Windows
// user or harness can use it as it is. The rewrite is one mechanism for
// every field: a JSON string that is a whole absolute fence path (a
// header's path and resolved, a listing's entry, a root) is that path as
// the OS spells it, and a failure's message and hints have the absolute
// paths within them rewritten too. File content is never rewritten: a
// string is rewritten whole only when it is one absolute path and
// nothing else. On Unix fsys.ToOS is the identity and nothing changes.

// osSpelled reports whether paths need rewriting here: not on Unix. The
// answer is the OS's, so it is asked once.
var osSpelled = sync.OnceValue(func() bool { return fsys.ToOS("/x") != "/x" })

// osPath is p as the OS spells it when p is an absolute fence path on a
// drive ("/C:" or "/C:/…"), else p.
func osPath(p string) string {
	if !osSpelled() || !isFenceDrivePath(p) {
		return p
	}
	return fsys.ToOS(p)
}

// isFenceDrivePath reports whether p is "/X:" or "/X:/…" with no line
// break: the fence's spelling of a path on a Windows drive.
func isFenceDrivePath(p string) bool {
	if len(p) < 3 || p[0] != '/' || p[2] != ':' || !isLetter(p[1]) {
		return false
	}
	return (len(p) == 3 || p[3] == '/') && !strings.ContainsAny(p, "\n\r")
}

func isLetter(c byte) bool { return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' }

// OSPath is p as the OS spells it when p is an absolute fence path: for
// a front end's own text that names a path (the MCP server's plain-text
// answers), as a result's fields name it.
func OSPath(p string) string { return osPath(p) }

// OSPathsIn is the text s with each absolute fence path within it as the
// OS spells it (osPathsIn): for a front end's own block of text, as a
// result's messages name paths.
func OSPathsIn(s string) string { return osPathsIn(s) }

// osPaths is ps with each as osPath spells it.
func osPaths(ps []string) []string {
	if !osSpelled() || len(ps) == 0 {
		return ps
	}
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = osPath(p)
	}
	return out
}

// osPathsIn is the text s (a message, a hint) with each absolute fence
// path within it as the OS spells it. A path starts at "/X:/" after the
// start or a space, quote or parenthesis, and runs to the end of the
// text, a line break, a quote, or ": ", ", ", "; " (how messages go on
// after a path); a name with spaces stays whole.
func osPathsIn(s string) string {
	if !osSpelled() || !strings.Contains(s, ":/") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '/' && (i == 0 || strings.IndexByte(" \t\n('\"`=[", s[i-1]) >= 0) && isFenceDrivePath(prefixTo(s[i:], 4)) {
			end := i + pathRun(s[i:])
			b.WriteString(fsys.ToOS(s[i:end]))
			i = end
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func prefixTo(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}

// pathRun is the length of the path that starts s (osPathsIn).
func pathRun(s string) int {
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\n', '\r', '\t', '"', '\'', '`':
			return i
		case ':', ',', ';':
			if i+1 == len(s) || s[i+1] == ' ' {
				return i
			}
		case ' ':
			if i+1 < len(s) && s[i+1] == '/' {
				return i // another path follows
			}
		}
	}
	return len(s)
}

// osPathsJSON is the JSON object raw with every string value that is a
// whole absolute fence path as the OS spells it (osPath), but the values
// of the keys that carry what a file or a link holds (heldKeys), given
// back as they are even when they are one path and nothing else.
func osPathsJSON(raw []byte) []byte {
	if !osSpelled() || !bytes.Contains(raw, []byte(`:/`)) {
		return raw
	}
	var out bytes.Buffer
	key := "" // the last key met: a value's own, or its array's
	for i := 0; i < len(raw); {
		if raw[i] != '"' {
			out.WriteByte(raw[i])
			i++
			continue
		}
		end := stringEnd(raw, i)
		lit := raw[i:end]
		var s string
		isKey := bytes.HasPrefix(bytes.TrimLeft(raw[end:], " \t\r\n"), []byte(":"))
		switch err := json.Unmarshal(lit, &s); {
		case err != nil:
		case isKey:
			key = s
		case !heldKeys[key] && isFenceDrivePath(s):
			if enc, err := json.Marshal(osPath(s)); err == nil {
				lit = enc
			}
		case proseKeys[key]:
			if w := osPathsIn(s); w != s {
				if enc, err := json.Marshal(w); err == nil {
					lit = enc
				}
			}
		}
		out.Write(lit)
		i = end
	}
	return out.Bytes()
}

// heldKeys are the keys whose string values are what a file, a match or
// a link holds, or what the shell printed: never rewritten.
var heldKeys = map[string]bool{"content": true, "text": true, "before": true, "after": true, "target": true, "printed": true}

// proseKeys are the keys whose string values are a result's own words,
// which may name a path within them (stat's way_forward and shell): the
// paths within are rewritten, as a failure's message's are.
var proseKeys = map[string]bool{"way_forward": true, "shell": true, "writable_reason": true, "message": true, "warnings": true, "hint": true}

// stringEnd is the index just past the JSON string literal that starts
// at raw[i].
func stringEnd(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}
