package sandbox

import "strings"

// Policy is the effective sandbox policy of one call, as loaded by the
// config package from the trusted and session sources (docs/design.md §2).
type Policy struct {
	// Mode is the session's mode.
	Mode Mode
	// Cwd is the session's working directory: the workspace root and the
	// base of relative paths. Absolute.
	Cwd string
	// Dir, when set, is the base of relative paths instead of Cwd: the
	// shell's directory inside a dsh-fs exec session, whose workspace
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
	// expanded from Home); every other is out of its reach (sockets.go).
	AllowUnixSockets []string
	// ReadHome are the trusted entries of the home folder ("~/…") a
	// session's read view shows the shell (readview.go).
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

// base is the folder relative paths are taken from.
func (p Policy) base() string {
	if p.Dir != "" {
		return p.Dir
	}
	return p.Cwd
}

// expandHome expands a leading "~" of a glob or path to p.Home. Without
// a home the "~" stays, and matches nothing.
func (p Policy) expandHome(g string) string {
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
// a glob, so that the rest of it stays writable (gitdir.go,
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
