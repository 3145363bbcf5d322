package sandbox

// Policy is the effective sandbox policy of one call, as loaded by the
// config package from flags, environment, config file and defaults.
type Policy struct {
	// Mode is the session's mode.
	Mode Mode
	// Cwd is the session's working directory: the workspace root and the
	// base of relative paths. Absolute.
	Cwd string
	// WritableRoots are the configured extra writable roots.
	WritableRoots []string
	// Tmp includes /tmp and os.TempDir() among the writable roots.
	Tmp bool
	// Protected are the globs, relative to each writable root, under which
	// nothing may be written even in workspace-write mode.
	Protected []string
	// DenyRead are the globs no mode may read ("~" already expanded or not:
	// the fence expands it).
	DenyRead []string
	// MaxMode is the ceiling of session overrides and escalations.
	MaxMode Mode
	// Approval says who approves an escalation.
	Approval Approval
	// Enforce selects the kernel enforcement layer.
	Enforce Enforce
	// ConfigFile is the loaded config file, if any; it is protected.
	ConfigFile string
}

// DefaultProtected is the default list of protected globs, relative to each
// writable root (docs/design.md §4 step 5). "**" matches any number of folders,
// including none, so ".vscode/**" protects the folder itself too.
//
// .git is protected at any depth, not only at the top of a root: a nested
// repository or a submodule runs its hooks just the same.
var DefaultProtected = []string{
	"**/.git/**",
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
