package seatbelt

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/session/plan"
)

// head is the start of every profile: deny by default (Seatbelt applies
// the last rule that matches an operation, so every later rule narrows
// or widens this), processes of the session, every read, the devices a
// shell writes to, and what macOS's own libraries ask for.
const head = `(version 1)
(deny default)
; processes: CMD and what it starts stay in this sandbox (a child inherits it)
(allow process-exec)
(allow process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow user-preference-read)
(allow ipc-posix-sem)
; reads: everything, but what later rules deny (deny_read)
(allow file-read*)
; the devices a shell writes to; a /dev/fd name reopens a descriptor CMD holds
(allow file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/stdout") (literal "/dev/stderr") (subpath "/dev/fd"))
(allow file-read* file-write* file-ioctl (literal "/dev/tty") (literal "/dev/ptmx") (regex #"^/dev/ttys[0-9]+$"))
(allow pseudo-tty)
`

// mach are the Mach services common tools need: user and group lookups,
// power assertions (caffeinate, builds), preferences, temporary folders,
// the system log, and the keychain.
var mach = []string{
	"com.apple.system.opendirectoryd.libinfo",
	"com.apple.system.opendirectoryd.membership",
	"com.apple.PowerManagement.control",
	"com.apple.cfprefsd.daemon",
	"com.apple.cfprefsd.agent",
	"com.apple.bsd.dirhelper",
	"com.apple.system.logger",
	"com.apple.SecurityServer",
}

// plan writes the rules of p after head.
func (g *gen) plan(p *plan.Plan) error {
	g.b.WriteString(head)
	f := p.Files
	if f == nil {
		f = &plan.Files{}
	}
	for _, step := range []func(*plan.Plan, *plan.Files) error{g.writes, g.protected, g.denyGlobs, g.runtime, g.sockets, g.network} {
		if err := step(p, f); err != nil {
			return err
		}
	}
	return nil
}

// writes grants writes under each writable root and cache. A cache the
// plan shows through a copy-on-write layer is not granted: macOS has no
// such layer, and a write in place would outlive the session and change
// what the person's builds use; it stays read-only.
func (g *gen) writes(p *plan.Plan, f *plan.Files) error {
	if !p.RestrictWrites {
		g.line("; writes: not restricted by the plan (danger-full-access)")
		g.line(`(allow file-write* (subpath "/"))`)
		return nil
	}
	g.line("; writes: under each writable root and cache, as real paths")
	if err := g.each("allow file-write*", "(subpath %s)", "WRITABLE_ROOT", p.Writable); err != nil {
		return err
	}
	overlay := map[string]bool{}
	for _, o := range f.Overlays {
		overlay[o.Path] = true
	}
	var caches []string
	for _, c := range p.Caches {
		if !overlay[c] {
			caches = append(caches, c)
		}
	}
	return g.each("allow file-write*", "(subpath %s)", "CACHE", caches)
}

// protected denies reads and writes of the hidden paths (deny_read),
// writes of the read-only ones, and the moves that could replace either:
// a protected path, and each folder from it up to its writable root,
// can be neither removed nor renamed, nor renamed onto (unlink, create).
// A subpath filter matches the folder itself, so a missing protected
// folder cannot be made either.
func (g *gen) protected(p *plan.Plan, f *plan.Files) error {
	if len(f.Hidden)+len(f.HiddenFiles) > 0 {
		g.line("; deny_read: neither read nor written")
		if err := g.each("deny file-read* file-write*", "(subpath %s)", "HIDDEN", f.Hidden); err != nil {
			return err
		}
		if err := g.each("deny file-read* file-write*", "(literal %s)", "HIDDEN_FILE", f.HiddenFiles); err != nil {
			return err
		}
	}
	if len(f.ReadOnly) > 0 {
		g.line("; protected paths inside the writable roots: read-only")
		if err := g.each("deny file-write*", "(subpath %s)", "READ_ONLY", f.ReadOnly); err != nil {
			return err
		}
	}
	if f.OverlayDir != "" {
		if err := g.each("deny file-read* file-write*", "(subpath %s)", "OVERLAY_DIR", []string{f.OverlayDir}); err != nil {
			return err
		}
	}
	pins := pinned(p, f)
	if len(pins) > 0 {
		g.line("; moves: a protected path and its folders up to the root are neither removed, renamed nor replaced")
		if err := g.each("deny file-write-unlink file-write-create", "(literal %s)", "PINNED", pins); err != nil {
			return err
		}
	}
	return g.anyCase(p, f.ReadOnly, pins)
}

// anyCase writes the protected paths' and pins' rules again as regexes
// that match beneath their root in any case: a Mac's volume is usually
// case-insensitive (.GIT opens .git), and whether Seatbelt matches the
// name as asked or as stored is not known without a Mac. The root's own
// part is matched as resolved: a spelling of the root in another case
// matches no rule that allows a write.
func (g *gen) anyCase(p *plan.Plan, readOnly, pins []string) error {
	roots := append(append([]string(nil), p.Writable...), p.Caches...)
	regexes := func(paths []string, end string) ([]string, error) {
		var out []string
		for _, path := range paths {
			root := within(roots, path)
			if root == "" || root == path {
				continue
			}
			re, err := g.beneathAnyCase(root, path, end)
			if err != nil {
				return nil, err
			}
			if !slices.Contains(out, re) {
				out = append(out, re)
			}
		}
		return out, nil
	}
	ro, err := regexes(readOnly, "(/.*)?$")
	if err != nil {
		return err
	}
	pinRes, err := regexes(pins, "$")
	if err != nil || len(ro)+len(pinRes) == 0 {
		return err
	}
	g.line("; the protected paths and pins again, beneath their root in any case (.GIT opens .git on a case-insensitive volume)")
	g.regexRule("deny file-write*", ro)
	g.regexRule("deny file-write-unlink file-write-create", pinRes)
	return nil
}

// regexRule writes "(rule (regex #"…") …)", any of res matching; nothing
// for none.
func (g *gen) regexRule(rule string, res []string) {
	if len(res) == 0 {
		return
	}
	line := "(" + rule
	for _, re := range res {
		line += ` (regex #"` + re + `")`
	}
	g.line(line, ")")
}

// pinned are the folders that hold a protected or hidden path inside a
// writable root, from the root down, and the plan's own pins, its
// symlinks included (unlink takes the link, not its target); sorted,
// each once. The protected and hidden paths themselves are not among
// them but where the plan pins them: their own rules deny every write.
func pinned(p *plan.Plan, f *plan.Files) []string {
	seen := map[string]bool{}
	var out []string
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, d := range slices.Concat(f.Pinned, f.PinnedLinks) {
		add(d)
	}
	roots := append(append([]string(nil), p.Writable...), p.Caches...)
	for _, group := range [][]string{f.ReadOnly, f.Hidden, f.HiddenFiles} {
		for _, path := range group {
			root := within(roots, path)
			if root == "" || path == root {
				continue
			}
			// The path itself is denied every write by its own rule.
			for d := filepath.Dir(path); ; d = filepath.Dir(d) {
				add(d)
				if d == root || d == filepath.Dir(d) {
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// within is the root of roots that holds path (the longest), "" for none.
func within(roots []string, path string) string {
	best := ""
	for _, r := range roots {
		if (path == r || strings.HasPrefix(path, strings.TrimSuffix(r, "/")+"/")) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// runtime hides exec's runtime folder but for this session's record and
// its denial log, which stay readable and are never written.
func (g *gen) runtime(p *plan.Plan, f *plan.Files) error {
	if f.Runtime == "" {
		return nil
	}
	g.line("; exec's runtime folder: hidden, but for this session's record and denial log (read-only)")
	rt, err := g.param("RUNTIME", f.Runtime)
	if err != nil {
		return err
	}
	if f.Record == "" {
		g.line("(deny file-read* file-write* (subpath ", rt, "))")
		return nil
	}
	rec, err := g.param("RECORD", f.Record)
	if err != nil {
		return err
	}
	den, err := g.param("DENIALS", filepath.Join(filepath.Dir(f.Record), plan.DenialsFolder))
	if err != nil {
		return err
	}
	g.line("(deny file-read* (require-all (subpath ", rt, ") (require-not (literal ", rec, ")) (require-not (subpath ", den, "))))")
	g.line("(deny file-write* (subpath ", rt, "))")
	return nil
}

// sockets allows connecting only to the unix sockets the plan names;
// where the plan restricts neither writes nor sockets
// (danger-full-access), to every one.
func (g *gen) sockets(p *plan.Plan, f *plan.Files) error {
	if p.Sockets == nil && !p.RestrictWrites {
		g.line("; unix sockets: not restricted by the plan")
		g.line("(allow system-socket (socket-domain AF_UNIX))")
		g.line("(allow network-outbound (remote unix-socket))")
		return nil
	}
	if len(p.Sockets) == 0 {
		g.line("; unix sockets: none may be connected to")
		return nil
	}
	g.line("; unix sockets: only those allow_unix_sockets names")
	g.line("(allow system-socket (socket-domain AF_UNIX))")
	return g.each("allow network-outbound", "(remote unix-socket (path-literal %s))", "SOCKET", p.Sockets)
}

// network writes the network's rules: none where it is off; where it is
// on, every IP address, and the DNS resolver's socket; where only the
// session's proxy is allowed, its port on loopback alone. trustd, which
// Go's and curl's TLS ask to verify a certificate, is granted only where
// the network is on or allow-listed: it is a way out of the sandbox that
// reaches the network (certificate revocation checks) without the proxy,
// and a session with no network has no certificate to verify.
func (g *gen) network(p *plan.Plan, f *plan.Files) error {
	services := slices.Clone(mach)
	switch {
	case !p.Network:
		g.line("; network: on")
		g.line("(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6) (socket-domain AF_UNIX))")
		g.line(`(allow network-outbound (remote ip "*:*"))`)
		g.line(`(allow network-inbound (local ip "*:*"))`)
		g.line(`(allow network-bind (local ip "*:*"))`)
		g.line(`(allow network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))`)
		services = append(services, "com.apple.trustd.agent")
	case p.ProxyPort != 0 || p.ProxyFD != 0:
		if p.ProxyPort < 0 || p.ProxyPort > 65535 {
			return fserr.New(fserr.InvalidArgument, "seatbelt: proxy port "+strconv.Itoa(p.ProxyPort)+" out of range")
		}
		g.line("; network: only the session's proxy, on loopback")
		g.line("(allow system-socket (socket-domain AF_INET) (socket-domain AF_INET6))")
		g.line(`(allow network-outbound (remote ip "localhost:` + strconv.Itoa(p.ProxyPort) + `"))`)
		services = append(services, "com.apple.trustd.agent")
	default:
		g.line("; network: off (no rule allows it)")
	}
	g.line("; Mach services; trustd only with a network (docs/exec.md, macOS)")
	g.b.WriteString("(allow mach-lookup")
	for _, s := range services {
		g.b.WriteString(` (global-name "` + s + `")`)
	}
	g.line(")")
	return nil
}

// each writes one rule, "(rule F0 F1 …)", whose filters are filter
// (with %s) around a parameter of kind for each of paths: any of them
// matches. Nothing for no path.
func (g *gen) each(rule, filter, kind string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	line := "(" + rule
	for _, path := range paths {
		expr, err := g.param(kind, path)
		if err != nil {
			return err
		}
		line += " " + strings.Replace(filter, "%s", expr, 1)
	}
	g.line(line, ")")
	return nil
}
