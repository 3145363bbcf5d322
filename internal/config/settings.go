// Package config turns flags, DSH_FS_* environment variables and the config
// file into the effective settings of one call, and remembers where each
// setting came from for `dsh-fs policy`.
package config

import (
	"fmt"
	"sync"

	"github.com/dshfs/dsh-fs/internal/policy"
)

// Key is a config file key; the same setting has one name everywhere:
// key diff_basis_max_bytes, env DSH_FS_DIFF_BASIS_MAX_BYTES, flag
// --diff-basis-max-bytes.
type Key string

// The settings of docs/design.md §2.
const (
	KeyMode             Key = "mode"
	KeyCwd              Key = "cwd"
	KeyWritableRoots    Key = "writable_roots"
	KeyTmp              Key = "tmp"
	KeyProtected        Key = "protected"
	KeyProtectedExtra   Key = "protected_extra"
	KeyDenyRead         Key = "deny_read"
	KeyMaxMode          Key = "max_mode"
	KeyApproval         Key = "approval"
	KeyApprovalCommand  Key = "approval_command"
	KeyApprovalTimeout  Key = "approval_timeout"
	KeyAllowRoots       Key = "allow_roots"
	KeyWorkspaces       Key = "workspaces"
	KeyAllowUnixSockets Key = "allow_unix_sockets"
	KeyReadHome         Key = "read_home"
	KeyNetwork          Key = "network"
	KeyNetworkAllow     Key = "network_allow"
	// KeyNetworkApproval says who is asked about a host network_allow
	// does not name; a session source may only set none.
	KeyNetworkApproval Key = "network_approval"
	// KeyNetworkUpstreamProxy is the proxy the session's proxy reaches
	// hosts through, and KeyNetworkUpstreamNoProxy the hosts it dials
	// directly; KeyNetworkAllowCommands grants hosts to programs while
	// they run. All three trusted only.
	KeyNetworkUpstreamProxy   Key = "network_upstream_proxy"
	KeyNetworkUpstreamNoProxy Key = "network_upstream_no_proxy"
	KeyNetworkAllowCommands   Key = "network_allow_commands"
	// KeyNetworkUpstreamProxyAuthFile names the file of the upstream's
	// credentials, which deny_read must hide from the session.
	KeyNetworkUpstreamProxyAuthFile Key = "network_upstream_proxy_auth_file"
	KeyAllowIoUring                 Key = "allow_io_uring"
	KeyDiffBasisMaxBytes            Key = "diff_basis_max_bytes"
	KeyDiffMaxBytes                 Key = "diff_max_bytes"
	KeyDiffContext                  Key = "diff_context"
	KeyReadMaxLines                 Key = "read_max_lines"
	KeyReadMaxBytes                 Key = "read_max_bytes"
	KeyOutput                       Key = "output"
	KeyEnforce                      Key = "enforce"
	// The toolchain caches of a dsh-fs exec session (docs/design.md §10).
	KeyCaches               Key = "caches"
	KeyCachesFromToolchains Key = "caches_from_toolchains"
	KeyCachesWritable       Key = "caches_writable"
	// KeyAuditLog is the file a dsh-fs exec supervisor appends its
	// session's audit trail to (docs/design.md §10); "" writes none.
	KeyAuditLog Key = "audit_log"
	// KeyExplainDenials says what a dsh-fs exec supervisor does with a
	// refusal it reads in the shell's output: inline, log or off.
	KeyExplainDenials Key = "explain_denials"
)

// The values of explain_denials: a line after the refusal and an entry in
// the denial log, the entry only, or nothing.
const (
	ExplainInline = "inline"
	ExplainLog    = "log"
	ExplainOff    = "off"
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
	// Who may reach a socket outside a session; a session source may
	// only drop entries (loader.narrows).
	{KeyAllowUnixSockets, "", "", kindList, []string{}, false},
	// What of the home folder a session's read view shows the shell; a
	// session source may only drop entries (loader.narrows).
	{KeyReadHome, "", "", kindList, policy.DefaultReadHome, false},
	// What the shell reaches over the network: the default follows the
	// mode (policy.DefaultNetwork); a session source may only narrow it,
	// on → allowlist → off, and only drop network_allow entries.
	{KeyNetwork, "", "", kindString, string(policy.NetworkOff), false},
	{KeyNetworkAllow, "", "", kindList, []string{}, false},
	// Who is asked about a host network_allow does not name: nobody
	// unless a trusted source says so; a session source may only say
	// none (loader.narrows).
	{KeyNetworkApproval, "", "", kindString, string(policy.NetworkApprovalNone), false},
	// Where the allowlist proxy's connections go (an upstream proxy, or
	// exec's own HTTPS_PROXY when unset), and which programs reach more
	// hosts than the session: trusted only, as they widen.
	{KeyNetworkUpstreamProxy, "", "", kindString, "", true},
	{KeyNetworkUpstreamNoProxy, "", "", kindList, []string{}, true},
	{KeyNetworkAllowCommands, "", "", kindList, []string{}, true},
	{KeyNetworkUpstreamProxyAuthFile, "", "", kindString, "", true},
	// Whether a session may make an io_uring, whose operations bypass
	// the system calls the network and file layers watch; a session
	// source may only turn it off (loader.narrows).
	{KeyAllowIoUring, "", "", kindBool, false, false},
	{KeyDiffBasisMaxBytes, FlagDiffBasisMaxBytes, "DSH_FS_DIFF_BASIS_MAX_BYTES", kindInt, DefaultDiffBasisMaxBytes, false},
	{KeyDiffMaxBytes, FlagDiffMaxBytes, "DSH_FS_DIFF_MAX_BYTES", kindInt, DefaultDiffMaxBytes, false},
	{KeyDiffContext, FlagDiffContext, "DSH_FS_DIFF_CONTEXT", kindInt, DefaultDiffContext, false},
	{KeyReadMaxLines, "", "DSH_FS_READ_MAX_LINES", kindInt, DefaultReadMaxLines, false},
	{KeyReadMaxBytes, "", "DSH_FS_READ_MAX_BYTES", kindInt, DefaultReadMaxBytes, false},
	{KeyOutput, FlagOutput, "DSH_FS_OUTPUT", kindString, "json", false},
	{KeyEnforce, FlagEnforce, "DSH_FS_ENFORCE", kindString, "auto", false},
	// A session may only drop caches (loader.narrows): entries of the
	// trusted list, the toolchains' own (false), the layer (narrower).
	{KeyCaches, "", "", kindList, []string{}, false},
	{KeyCachesFromToolchains, "", "", kindBool, true, false},
	{KeyCachesWritable, "", "", kindString, "overlay", false},
	// Where the supervisor writes the session's audit trail: trusted
	// only, since the supervisor writes where it names, outside the
	// session's fence; a session source can neither move nor stop it.
	{KeyAuditLog, "", "", kindString, "", true},
	// How a refusal in the shell's output is explained: any source may
	// set it, since it widens nothing.
	{KeyExplainDenials, "", "", kindString, ExplainInline, false},
}

// managedKeys are what the managed requirements file may say: ceilings
// and additions that even the user's own file cannot undo.
var managedKeys = []Key{KeyMaxMode, KeyApproval, KeyApprovalCommand, KeyApprovalTimeout,
	KeyAllowRoots, KeyWorkspaces, KeyDenyRead, KeyProtectedExtra, KeyTmp, KeyAllowUnixSockets,
	KeyNetwork, KeyNetworkAllow, KeyNetworkApproval, KeyAllowIoUring, KeyAuditLog}

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

// EnvVar is one DSH_FS_* variable, for the help and the man pages.
type EnvVar struct {
	Name string
	Doc  string
}

// envDocs says what each setting's variable does; every setting with a
// variable has one (TestEnvironmentDocumented).
var envDocs = sync.OnceValue(func() map[Key]string {
	return map[Key]string{
		KeyMode:              "sandbox mode: read-only, workspace-write or danger-full-access; at most the trusted mode",
		KeyCwd:               "session cwd: the workspace root and the base of relative paths",
		KeyWritableRoots:     "extra writable roots, a colon-separated path list, each beneath an allowed or trusted root",
		KeyTmp:               "false leaves /tmp and the OS temp folder out of the writable roots",
		KeyDiffBasisMaxBytes: "largest old content a write or edit diffs against",
		KeyDiffMaxBytes:      "largest diff text a result carries",
		KeyDiffContext:       "lines of context in a diff",
		KeyReadMaxLines:      "most lines one read returns",
		KeyReadMaxBytes:      "most bytes one read returns",
		KeyOutput:            "json or text",
		KeyEnforce:           "kernel enforcement, at least the trusted one: auto, landlock or off",
	}
})

// Environment lists every DSH_FS_* variable a call reads: the session
// config file, then each setting's, in the order `dsh-fs policy` prints
// them, with the default where there is one. All are session sources:
// they may narrow the trusted policy, never widen it (docs/design.md §2).
func Environment() []EnvVar {
	vars := []EnvVar{{EnvConfig, "a session config file, which may only narrow the policy of the trusted files"}}
	for _, s := range settings {
		if s.env == "" {
			continue
		}
		doc := envDocs()[s.key]
		switch d := s.def.(type) {
		case int:
			doc += fmt.Sprintf(" (default %d)", d)
		case string:
			if d != "" {
				doc += " (default " + d + ")"
			}
		case bool:
			doc += fmt.Sprintf(" (default %t)", d)
		}
		vars = append(vars, EnvVar{s.env, doc})
	}
	return vars
}

// ConfigFile is one config file dsh-fs looks for, for the man pages.
type ConfigFile struct {
	Path string
	Doc  string
}

// Files lists the config files of docs/design.md §2.1 at l, as a user
// reads their paths: the user file under "~" (home from the user
// database).
func (l Locations) Files() []ConfigFile {
	user := ConfigFile{l.UserFile("~"), "the user's config (trusted); ~ is the home folder from the user database, never $HOME"}
	if l.UserDir != nil {
		user = ConfigFile{`%APPDATA%\dsh-fs\config.yaml`, "the user's config (trusted); %APPDATA% is the roaming AppData folder as the shell's known folders name it, never the variable"}
	}
	return []ConfigFile{
		{l.SystemFile(), "the system config (trusted)"},
		user,
		{l.RequirementsFile(), "managed requirements: ceilings even the user's config cannot exceed (trusted)"},
		{"$XDG_CONFIG_HOME/dsh-fs/config.yaml", "a session config file, read when XDG_CONFIG_HOME is set, that path is not the user's config, and neither --config nor " + EnvConfig + " names one; it may only narrow the policy"},
	}
}
