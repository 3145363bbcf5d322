// Package config turns flags, DSH_FS_* environment variables and the config
// file into the effective settings of one call, and remembers where each
// setting came from for `dsh-fs policy`. It is the only importer of viper.
package config

// Key is a config file key; the same setting has one name everywhere:
// key diff_basis_max_bytes, env DSH_FS_DIFF_BASIS_MAX_BYTES, flag
// --diff-basis-max-bytes.
type Key string

// The settings of docs/design.md §2.
const (
	KeyMode              Key = "mode"
	KeyCwd               Key = "cwd"
	KeyWritableRoots     Key = "writable_roots"
	KeyTmp               Key = "tmp"
	KeyProtected         Key = "protected"
	KeyProtectedExtra    Key = "protected_extra"
	KeyDenyRead          Key = "deny_read"
	KeyMaxMode           Key = "max_mode"
	KeyApproval          Key = "approval"
	KeyApprovalCommand   Key = "approval_command"
	KeyApprovalTimeout   Key = "approval_timeout"
	KeyAllowRoots        Key = "allow_roots"
	KeyWorkspaces        Key = "workspaces"
	KeyDiffBasisMaxBytes Key = "diff_basis_max_bytes"
	KeyDiffMaxBytes      Key = "diff_max_bytes"
	KeyDiffContext       Key = "diff_context"
	KeyReadMaxLines      Key = "read_max_lines"
	KeyReadMaxBytes      Key = "read_max_bytes"
	KeyOutput            Key = "output"
	KeyEnforce           Key = "enforce"
)

// Flag names. A setting without a flag has none here; the read window's
// flag (--limit) belongs to the read command alone.
const (
	FlagMode              = "mode"
	FlagCwd               = "cwd"
	FlagWritableRoot      = "writable-root"
	FlagTmp               = "tmp"
	FlagDiffBasisMaxBytes = "diff-basis-max-bytes"
	FlagDiffMaxBytes      = "diff-max-bytes"
	FlagDiffContext       = "context"
	FlagOutput            = "output"
	FlagEnforce           = "enforce"
	FlagConfig            = "config"
	FlagEscalate          = "escalate"
)

// EnvConfig names the config file, below --config.
const EnvConfig = "DSH_FS_CONFIG"

type kind int

const (
	kindString kind = iota
	kindBool
	kindInt
	kindList
)

// setting describes one setting: its key, flag, environment variable, type
// and default, and whether only a trusted source may set it.
type setting struct {
	key  Key
	flag string // "" when there is none
	env  string // "" when there is none
	kind kind
	def  any
	// trustedOnly settings decide who may widen the fence, or how far:
	// any value from a session source is a denial.
	trustedOnly bool
}

// Defaults of docs/design.md §2.
const (
	DefaultDiffBasisMaxBytes = 1 << 20
	DefaultDiffMaxBytes      = 64 << 10
	DefaultDiffContext       = 3
	DefaultReadMaxLines      = 2000
	DefaultReadMaxBytes      = 256 << 10
)

// settings is the table of every setting, in the order `dsh-fs policy`
// prints them. The settings a model could use to widen its own fence
// (protected, deny_read, max_mode, approval, …) have no flag and no
// environment variable, and session config files may only narrow them
// (docs/design.md §2).
var settings = []setting{
	{KeyMode, FlagMode, "DSH_FS_MODE", kindString, "workspace-write", false},
	{KeyCwd, FlagCwd, "DSH_FS_CWD", kindString, "", false},
	{KeyWritableRoots, FlagWritableRoot, "DSH_FS_WRITABLE_ROOTS", kindList, []string{}, false},
	{KeyTmp, FlagTmp, "DSH_FS_TMP", kindBool, true, false},
	{KeyProtected, "", "", kindList, nil, false},
	{KeyProtectedExtra, "", "", kindList, []string{}, false},
	{KeyDenyRead, "", "", kindList, []string{}, false},
	{KeyMaxMode, "", "", kindString, "danger-full-access", true},
	{KeyApproval, "", "", kindString, "supervisor", true},
	{KeyApprovalCommand, "", "", kindList, []string{}, true},
	{KeyApprovalTimeout, "", "", kindInt, 60, true},
	{KeyAllowRoots, "", "", kindList, []string{}, true},
	{KeyWorkspaces, "", "", kindList, []string{}, true},
	{KeyDiffBasisMaxBytes, FlagDiffBasisMaxBytes, "DSH_FS_DIFF_BASIS_MAX_BYTES", kindInt, DefaultDiffBasisMaxBytes, false},
	{KeyDiffMaxBytes, FlagDiffMaxBytes, "DSH_FS_DIFF_MAX_BYTES", kindInt, DefaultDiffMaxBytes, false},
	{KeyDiffContext, FlagDiffContext, "DSH_FS_DIFF_CONTEXT", kindInt, DefaultDiffContext, false},
	{KeyReadMaxLines, "", "DSH_FS_READ_MAX_LINES", kindInt, DefaultReadMaxLines, false},
	{KeyReadMaxBytes, "", "DSH_FS_READ_MAX_BYTES", kindInt, DefaultReadMaxBytes, false},
	{KeyOutput, FlagOutput, "DSH_FS_OUTPUT", kindString, "json", false},
	{KeyEnforce, FlagEnforce, "DSH_FS_ENFORCE", kindString, "auto", false},
}

// managedKeys are what the managed requirements file may say: ceilings
// and additions that even the user's own file cannot undo.
var managedKeys = []Key{KeyMaxMode, KeyApproval, KeyApprovalCommand, KeyApprovalTimeout,
	KeyAllowRoots, KeyWorkspaces, KeyDenyRead, KeyProtectedExtra, KeyTmp}

// OutputFromEnv is the output format DSH_FS_OUTPUT asks for, read with
// lookupEnv, or "" when it is unset or empty. It serves the output of the
// calls that print before their settings are loaded, or without them:
// usage errors, version, tools; Load decides it for every other call.
func OutputFromEnv(lookupEnv func(string) (string, bool)) string {
	for _, s := range settings {
		if s.key == KeyOutput {
			v, _ := lookupEnv(s.env)
			return v
		}
	}
	return ""
}
