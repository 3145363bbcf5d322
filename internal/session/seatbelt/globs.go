package seatbelt

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// deny_read as regexes. A deny_read glob that is not anchored to one
// folder ("**/.env") names files anywhere on disk; on Linux the mount
// layer can hide only what a walk finds, and a read view covers the home
// folders for the rest (docs/design.md §10). Seatbelt matches every path
// the kernel is asked for against the profile's regexes, so a Mac
// session holds such a glob everywhere, with no walk and no view: each
// deny_read glob becomes one regex with the glob's own meaning
// (pathmatch.Covers: the path, or a folder above it, matches).
//
// Case: a Mac's volume is usually case-insensitive, where .ENV opens
// .env. The letters of a glob's wildcard part are matched in either case
// ([eE]): the regex may deny a file that differs from a denied one by
// case alone on a case-sensitive volume, never the other way round. The
// glob's literal folder prefix (an absolute glob's "/Users/a/proj") is
// written as the kernel resolves it, as every path parameter is.

// GlobRegex is the regex, in the syntax the profile writes inside #"…",
// that matches the real paths the deny_read glob covers, glob being
// absolute or relative ("**/"-prefixed or not: a relative glob names the
// path wherever it is); resolve gives the real path of the glob's literal
// folder prefix. ok is false, with why, for a glob no such regex can
// carry: a character class or escape ([…], \), a character the profile's
// strings cannot hold without a backslash (", ^), or a regex over
// MaxString bytes.
func GlobRegex(glob string, resolve func(string) (string, error)) (re string, why string, ok bool) {
	if !strings.HasPrefix(glob, "/") && !strings.HasPrefix(glob, "**/") {
		glob = "**/" + glob
	}
	var b strings.Builder
	b.WriteString("^")
	prefix, rest := "", pathmatch.Components(glob)
	if strings.HasPrefix(glob, "/") {
		var parts []string
		prefix, parts = pathmatch.LiteralPrefix(glob)
		rest = pathmatch.Components(strings.Join(parts, "/"))
		if prefix == "" {
			prefix = "/"
		}
		real, err := resolve(prefix)
		if err != nil {
			return "", "its folder " + prefix + " cannot be resolved: " + err.Error(), false
		}
		if real != "/" {
			if err := literal(&b, real, false); err != nil {
				return "", err.Error(), false
			}
		}
	}
	for len(rest) > 0 && rest[len(rest)-1] == "**" {
		rest = rest[:len(rest)-1] // a trailing "**" covers what the glob before it covers
	}
	for _, c := range rest {
		if c == "**" {
			b.WriteString("(/[^/]+)*")
			continue
		}
		b.WriteString("/")
		if err := component(&b, c); err != nil {
			return "", err.Error(), false
		}
	}
	b.WriteString("(/.*)?$")
	if len(b.String())+3 > MaxString {
		return "", fmt.Sprintf("its regex is over %d bytes", MaxString), false
	}
	return b.String(), "", true
}

// component writes the regex of one glob component (path.Match's
// syntax, without classes or escapes): "*" any run of characters but
// "/", "?" one of them, anything else itself in either case.
func component(b *strings.Builder, c string) error {
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '*':
			b.WriteString("[^/]*")
		case '?':
			b.WriteString("[^/]")
		case '[', '\\':
			return fmt.Errorf("it has a character class or escape (%q), which the profile's regex does not carry", c)
		default:
			if err := literal(b, c[i:i+1], true); err != nil {
				return err
			}
		}
	}
	return nil
}

// literal writes s to match itself: a letter in either case with fold, a
// character the regex gives a meaning (. [ ( ) * + ? { } | $) as a
// one-character class ([.]), which means the same whether the reader of
// #"…" passes a backslash on or not (the package's doc), anything else as
// it is; ", ^ and \ cannot be written so and are refused.
func literal(b *strings.Builder, s string, fold bool) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' && fold:
			b.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
		case c >= 'A' && c <= 'Z' && fold:
			b.WriteString("[" + string(c-'A'+'a') + string(c) + "]")
		case c == '"' || c == '^' || c == '\\' || c < 0x20 || c == 0x7f:
			return fmt.Errorf("it holds %q, which the profile's regex cannot hold without a backslash", c)
		case strings.IndexByte(".[()*+?{}|$", c) >= 0:
			b.WriteString("[" + string(c) + "]")
		default:
			b.WriteByte(c) // no meaning outside a class in either engine: "-", "]", " ", "@", …
		}
	}
	return nil
}

// denyGlobs denies reads and writes of every path a deny_read glob of
// the plan covers, by one regex each, after every rule that allows
// (Seatbelt applies the last rule that matches). A glob no regex can
// carry is named in a comment: it holds only where the plan found its
// files (Hidden, HiddenFiles), and policy says so.
func (g *gen) denyGlobs(p *plan.Plan, f *plan.Files) error {
	if len(f.DenyGlobs) == 0 {
		return nil
	}
	g.line("; deny_read globs: neither read nor written, on any path (a regex each, the glob's own meaning)")
	var res []string
	for _, glob := range f.DenyGlobs {
		re, why, ok := GlobRegex(glob, g.realpath.Resolve)
		if !ok {
			g.line("; not as a regex: ", strings.ReplaceAll(glob, "\n", " "), ": ", why)
			continue
		}
		if !slices.Contains(res, re) {
			res = append(res, re)
		}
	}
	for _, re := range res {
		g.line(`(deny file-read* file-write* (regex #"`, re, `"))`)
	}
	return nil
}

// beneathAnyCase is the regex of path, a path beneath root, with root's
// part as the kernel resolves it and the rest in either case, then end
// ("(/.*)?$" for the path and what lies beneath it, "$" for it alone).
func (g *gen) beneathAnyCase(root, path, end string) (string, error) {
	realRoot, err := g.realpath.Resolve(root)
	if err != nil {
		return "", err
	}
	real, err := g.realpath.Resolve(path)
	if err != nil {
		return "", err
	}
	rest, ok := strings.CutPrefix(real, strings.TrimSuffix(realRoot, "/")+"/")
	if !ok {
		return "", fserr.New(fserr.IO, "seatbelt: "+path+" resolves outside its root "+root)
	}
	var b strings.Builder
	b.WriteString("^")
	if err := literal(&b, realRoot, false); err != nil {
		return "", fserr.New(fserr.InvalidArgument, "seatbelt: "+root+": "+err.Error())
	}
	b.WriteString("/")
	if err := literal(&b, rest, true); err != nil {
		return "", fserr.New(fserr.InvalidArgument, "seatbelt: "+path+": "+err.Error())
	}
	b.WriteString(end)
	if b.Len()+3 > MaxString {
		return "", fserr.New(fserr.InvalidArgument, "seatbelt: "+path+": its any-case regex is over "+strconv.Itoa(MaxString)+" bytes")
	}
	return b.String(), nil
}
