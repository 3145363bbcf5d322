package policy

import (
	"slices"
	"strings"
)

// Policy is the effective sandbox policy of one call, as loaded by the
// config package from the trusted and session sources (docs/design.md §2).
type Policy struct {
	// Mode is the session's mode.
	Mode Mode
	// Cwd is the session's working directory: the workspace root and the
	// base of relative paths. Absolute.
	Cwd string
	// Dir, when set, is the base of relative paths instead of Cwd: the
	// shell's working directory inside a dsh-fs exec session, whose workspace
	// root stays the one exec pinned. Absolute, canonical.
	Dir string
	// CwdTrusted says a trusted source pinned Cwd: it is then a
	// workspace whatever the workspaces list and the too-broad rule say.
	CwdTrusted bool
	// CwdSource names the session source of Cwd for a denial: "working
	// directory /", "--cwd ..", "DSH_FS_CWD=/".
	CwdSource string
	// Workspaces are the trusted globs a session cwd must match, or lie
	// beneath a folder matching, to be a writable root; empty allows any
	// cwd that is not too broad.
	Workspaces []string
	// AllowRoots are the trusted folders beneath which a session may add
	// writable roots.
	AllowRoots []string
	// WritableRoots are the configured extra writable roots, each allowed
	// by the trusted policy.
	WritableRoots []string
	// Within, when not nil, are the folders an MCP client offered as its
	// roots (canonical): only the parts of the writable roots within one
	// of them stay writable, so they narrow the writable set and never
	// widen it. An empty, non-nil list leaves nothing writable.
	Within []string
	// ReadWithin, when not nil, are the only folders (canonical) that
	// reads, listings, stats and searches may reach, besides the writable
	// roots in workspace-write mode: dsh-fs mcp's allowed folders, as the
	// official server confines them, since an MCP client's model has no
	// other way to the files (docs/design.md §5). The CLI leaves it nil:
	// the shell beside it reads whatever its user can.
	ReadWithin []string
	// Tmp includes /tmp and os.TempDir() among the writable roots.
	Tmp bool
	// Protected are the globs, relative to each writable root, under which
	// nothing may be written even in workspace-write mode.
	Protected []string
	// DenyRead are the globs no mode may read ("~" is expanded from Home).
	DenyRead []string
	// MaxMode is the ceiling of escalations.
	MaxMode Mode
	// Approval says who approves an escalation, and ApprovalCommand and
	// ApprovalTimeoutSeconds shape the "command" approval.
	Approval               Approval
	ApprovalCommand        []string
	ApprovalTimeoutSeconds int
	// Enforce selects the kernel enforcement layer.
	Enforce Enforce
	// AllowUnixSockets are the trusted globs of the unix sockets outside
	// a dsh-fs exec session that its shell may connect to ("~" is
	// expanded from Home); every other is out of its reach.
	AllowUnixSockets []string
	// ReadHome are the trusted entries of the home folder ("~/…") a
	// session's read view shows the shell.
	ReadHome []string
	// Network is what a dsh-fs exec session's shell may reach over the
	// network, and NetworkAllow the hosts its proxy reaches under
	// NetworkAllowlist (network.go).
	Network      Network
	NetworkAllow []string
	// NetworkApproval is who is asked about a host NetworkAllow does not
	// name (network_approval); "" is none.
	NetworkApproval NetworkApproval
	// NetworkUpstreamProxy is the proxy the allowlist proxy reaches hosts
	// through ("" for exec's own HTTPS_PROXY, or none), never with
	// credentials; NetworkUpstreamNoProxy the hosts it dials directly.
	NetworkUpstreamProxy   string
	NetworkUpstreamNoProxy []string
	// NetworkUpstreamAuth is the file of the upstream's credentials
	// (user:password), which deny_read hides from the session; "" for
	// none.
	NetworkUpstreamAuth string
	// NetworkAllowCommands are the grants of hosts to programs while
	// they run, "COMMAND=HOST" each (ParseCommandGrants).
	NetworkAllowCommands []string
	// AllowIoUring lets a dsh-fs exec session make an io_uring; without
	// it the session's seccomp filter refuses io_uring's calls.
	AllowIoUring bool
	// Home is the user's home folder from the user database, never from
	// $HOME, which the session sets: "~" in every glob expands to it.
	Home string
	// ConfigFiles are the config files this call loaded and TrustedFiles
	// every trusted config path, loaded or not: all are protected.
	ConfigFiles  []string
	TrustedFiles []string
	// DenyIdentities, inside a dsh-fs exec session, are the identities
	// of deny_read files its supervisor saw before the mount layer hid
	// them (the record's): a file that is one of them is denied whatever
	// its name or number of links.
	DenyIdentities []DenyIdentity
}

// Base is the folder relative paths are taken from: Dir when set, else
// Cwd.
func (p Policy) Base() string {
	if p.Dir != "" {
		return p.Dir
	}
	return p.Cwd
}

// ExpandHome expands a leading "~" of a glob or path to p.Home. Without
// a home the "~" stays, and matches nothing.
func (p Policy) ExpandHome(g string) string {
	if p.Home != "" && (g == "~" || strings.HasPrefix(g, "~/")) {
		return p.Home + g[1:]
	}
	return g
}

// DefaultProtected is the default list of protected globs, relative to each
// writable root (docs/design.md §4 step 5). "**" matches any number of folders,
// including none, so ".vscode/**" protects the folder itself too.
//
// A git directory is not among the globs: what is protected in it (its
// config, hooks and the parts that redirect git, at any depth, nested
// repositories and submodules included) is decided by what it is, not by
// a glob, so that the rest of it stays writable (the fence's
// GitProtectedPart). A trusted "**/.git/**" here protects it whole again.
var DefaultProtected = []string{
	".dsh-fs/**",
	".mcp.json",
	".vscode/**",
	".idea/**",
	".claude/**",
	".codex/**",
	".agents/**",
	"**/.bashrc",
	"**/.bash_profile",
	"**/.zshrc",
	"**/.zprofile",
	"**/.profile",
}

// DefaultReadHome is the default of the trusted read_home: what of the
// home folder a shell's ordinary day needs (git's identity, the shells'
// start-up files, the programs and toolchains installed there), and no
// credential store (~/.ssh, ~/.aws, ~/.netrc, ~/.docker, ~/.git-credentials,
// ~/.cargo/credentials.toml, ~/.npmrc and ~/.pypirc stay out).
var DefaultReadHome = []string{
	"~/.gitconfig", "~/.config/git",
	"~/.profile", "~/.bashrc", "~/.bash_profile", "~/.zshenv", "~/.zshrc", "~/.zprofile", "~/.inputrc",
	"~/.local/bin", "~/go/bin", "~/.cargo/bin", "~/.rustup", "~/.nvm", "~/.pyenv", "~/sdk",
}

// DenyIdentity is the identity of a deny_read file with several links
// (its device and inode), and the glob that covers it: another name of
// the same file reads the same secret. A dsh-fs exec session's record
// carries the identities its supervisor saw before the mount layer hid
// the files, and the file tool inside refuses a file that has one
// (Policy.DenyIdentities).
type DenyIdentity struct {
	Dev  uint64 `json:"dev"`
	Ino  uint64 `json:"ino"`
	Glob string `json:"glob"`
}

// Settings of caches_writable (docs/design.md §2.2), narrowest first.
const (
	CachesOff     = "off"
	CachesOverlay = "overlay"
	CachesDirect  = "direct"
)

// CachesWritableWider reports whether the caches_writable value a lets
// the session write more than b does.
func CachesWritableWider(a, b string) bool {
	rank := func(v string) int { return slices.Index([]string{CachesOff, CachesOverlay, CachesDirect}, v) }
	return rank(a) > rank(b)
}
