package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// yamlComplaint and quoted are compiled when a config error needs them,
// not at the start of every call.
var (
	yamlComplaint = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+): (.*)`) })
	quoted        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("'[^']*'|`[^`]*`|\"[^\"]*\"") })
)

// whereMalformed says where in data, a config file's bytes, its parser
// (err) failed: the line, the column where the parser knows it (JSON and
// TOML; YAML's parser reports lines only), the setting whose value holds
// that line, and what the parser expected. It never quotes the file: a
// session may name a secret as its config file, so whatever the
// parser's words quote is left out, and a key is shown only when it
// looks like a setting's name (shownKey).
func whereMalformed(data []byte, err error) string {
	line, col, why := 0, 0, ""
	var syntax *json.SyntaxError
	var decode *toml.DecodeError
	switch {
	case errors.As(err, &syntax):
		line, col = lineColumn(data, int(syntax.Offset))
		why = syntax.Error()
	case errors.As(err, &decode):
		line, col = decode.Position()
		why = decode.Error()
	default:
		var key string
		if line, key, why = yamlWhere(data, err); line == 0 {
			return ""
		}
		return where(line, 0, key, why)
	}
	return where(line, col, settingAt(data, line), why)
}

// where is whereMalformed's phrase.
func where(line, col int, key, why string) string {
	out := fmt.Sprintf(" at line %d", line)
	if col > 0 {
		out += fmt.Sprintf(", column %d", col)
	}
	if key != "" {
		out += ", in " + shownKey(key)
	}
	if why = strings.TrimSpace(quoted().ReplaceAllString(why, "…")); why != "" {
		out += ": " + why
	}
	return out
}

// yamlWhere finds where a YAML config file is malformed. The parser's
// own line numbers are off by one for some errors and point at the start
// of an enclosing construct for others, so each top-level setting's
// lines are parsed alone: the first that fails is the setting, and the
// line is the parser's within it, kept inside its lines. Where no
// setting fails alone (a key given twice), the parser's line stands.
func yamlWhere(data []byte, err error) (line int, key, why string) {
	lines := strings.Split(string(data), "\n")
	start := -1
	try := func(end int) bool {
		if start < 0 {
			return false
		}
		block := strings.Join(lines[start:end], "\n")
		var n yaml.Node
		e := yaml.Unmarshal([]byte(block), &n)
		if e == nil {
			return false
		}
		rel, w := yamlComplaintOf(e)
		line = start + min(max(rel, 1), end-start)
		key, why = settingAt(data, start+1), w
		return true
	}
	for i, l := range lines {
		if l != "" && l[0] != ' ' && l[0] != '\t' && l[0] != '#' && l[0] != '-' {
			if try(i) {
				return line, key, why
			}
			start = i
		}
	}
	if try(len(lines)) {
		return line, key, why
	}
	line, why = yamlComplaintOf(err)
	return line, settingAt(data, line), why
}

// yamlComplaintOf reads the line and the words of a YAML parser's error.
func yamlComplaintOf(err error) (int, string) {
	m := yamlComplaint().FindStringSubmatch(err.Error())
	if m == nil {
		return 0, ""
	}
	line, _ := strconv.Atoi(m[1])
	if strings.HasPrefix(m[2], "cannot unmarshal") {
		// The file parsed, as something else than settings: a bare
		// word, a list.
		return line, "not a map of settings (key: value lines)"
	}
	return line, m[2]
}

// lineColumn turns a byte offset into data into a line and a column,
// both counted from 1. encoding/json's offset is just past the byte
// where it stopped.
func lineColumn(data []byte, offset int) (int, int) {
	offset = min(max(offset-1, 0), len(data))
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	return line, offset - (bytes.LastIndexByte(before, '\n') + 1) + 1
}

// settingAt is the top-level key whose value holds line (from 1) of a
// YAML or TOML file: the last line at or above it that starts a key at
// the left margin ("mode:", "deny_read =", a JSON "\"mode\":" too). ""
// when there is none.
func settingAt(data []byte, line int) string {
	lines := strings.Split(string(data), "\n")
	for i := min(line, len(lines)) - 1; i >= 0; i-- {
		l := strings.TrimLeft(lines[i], "{ \t")
		if l == "" || strings.HasPrefix(l, "#") || (len(l) < len(lines[i]) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "{") && !strings.HasPrefix(l, "\"")) {
			continue
		}
		l = strings.TrimPrefix(l, "\"")
		if end := strings.IndexAny(l, ":= \""); end > 0 {
			return l[:end]
		}
	}
	return ""
}
