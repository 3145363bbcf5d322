package sbpltest

import (
	"strings"
	"testing"
)

// profile is a small profile in the generator's subset: writes under
// /w but /w/.git, whose config stays readable only; /w/.git/keep
// writable again; the runtime hidden but for the record; reads open but
// for /w/secret; one unix socket; loopback port 8080.
const profile = `(version 1)
(deny default)
; a comment (allow default) is no rule
(allow file-read*)
(allow file-read* file-write* file-ioctl (regex #"^/dev/ttys[0-9]+$"))
(allow file-write* (subpath (param "W")))
(deny file-write* (subpath "/w/.git"))
(allow file-write* (literal "/w/.git/keep"))
(deny file-read* file-write* (literal "/w/secret"))
(deny file-read* (require-all (subpath "/rt") (require-not (literal "/rt/rec"))))
(allow network-outbound (remote unix-socket (path-literal "/s/ok")))
(allow network-outbound (remote ip "localhost:8080"))
(allow mach-lookup (global-name "com.apple.system.logger"))
`

// TestDecide: last match wins, subpath holds the folder itself, literal
// only the path, regex, require-all and require-not, the operations'
// wildcards, unix sockets and loopback ports.
func TestDecide(t *testing.T) {
	p, err := Compile(profile, map[string]string{"W": "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		op, obj string
		want    bool
	}{
		{FileReadData, "/anything", true},
		{FileWriteData, "/anything", false},
		{FileWriteCreate, "/w/new", true},
		{FileWriteUnlink, "/w/a", true},
		{FileWriteCreate, "/w", true},
		{FileWriteCreate, "/wx", false},
		{FileWriteData, "/w/.git", false},
		{FileWriteData, "/w/.git/config", false},
		{FileReadData, "/w/.git/config", true},
		{FileWriteData, "/w/.git/keep", true},
		{FileWriteData, "/w/.git/keep/x", false},
		{FileReadData, "/w/secret", false},
		{FileWriteData, "/w/secret", false},
		{FileReadData, "/w/secret/x", true},
		{FileWriteData, "/dev/ttys004", true},
		{FileWriteData, "/dev/ttys", false},
		{FileWriteData, "/dev/ttys004x", false},
		{FileReadData, "/rt/other", false},
		{FileReadData, "/rt/rec", true},
		{FileReadData, "/rt", false},
		{NetworkOutbound, "/s/ok", true},
		{NetworkOutbound, "/s/other", false},
		{NetworkOutbound, "ip:127.0.0.1:8080", true},
		{NetworkOutbound, "ip:[::1]:8080", true},
		{NetworkOutbound, "ip:127.0.0.1:8081", false},
		{NetworkOutbound, "ip:10.0.0.1:8080", false},
	} {
		got, err := p.Decide(tc.op, tc.obj)
		if err != nil || got != tc.want {
			t.Errorf("Decide(%s, %s) = %t, %v; want %t", tc.op, tc.obj, got, err, tc.want)
		}
	}
}

// TestCompileRefuses: the evaluator refuses what the generator never
// writes, rather than guess: a profile that does not deny by default,
// (allow default), a parameter not given, an unknown form or filter, a
// regex with a backslash (whose meaning differs between readers of
// #"…"), a string regex.
func TestCompileRefuses(t *testing.T) {
	head := "(version 1)\n(deny default)\n"
	for _, tc := range []struct {
		name, text string
		want       string
	}{
		{"no deny default", "(version 1)\n(allow file-read*)\n", "deny by default"},
		{"allow default", head + "(allow default)\n", "allow default"},
		{"param", head + `(allow file-write* (subpath (param "X")))` + "\n", "not given"},
		{"form", head + "(import \"system.sb\")\n", "form"},
		{"unclosed", head + "(allow file-read*\n", "unclosed"},
	} {
		if _, err := Compile(tc.text, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Compile = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	for _, tc := range []struct {
		name, rule string
		want       string
	}{
		{"filter", `(allow file-write* (vnode-type REGULAR-FILE))`, "not one the generator writes"},
		{"backslash", `(allow file-write* (regex #"^/w/a\.b$"))`, "backslash"},
		{"string regex", `(allow file-write* (regex "^/w/"))`, "#"},
	} {
		p, err := Compile(head+tc.rule+"\n", nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if _, err := p.Decide(FileWriteData, "/w/a.b"); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Decide = %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// TestScenarios: the table parses, every scenario has cases, and a case
// of each operation is in it somewhere.
func TestScenarios(t *testing.T) {
	ss, err := Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]bool{}
	for _, s := range ss {
		for _, c := range s.Cases {
			ops[c.Op] = true
		}
	}
	for _, op := range []string{OpRead, OpWrite, OpMkdir, OpRm, OpMv, OpConnect, OpTCP} {
		if !ops[op] {
			t.Errorf("no case of %s in the table", op)
		}
	}
}
