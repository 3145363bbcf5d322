package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/policyview"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/supervisor"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// PolicyOptions are the inputs of policy.
type PolicyOptions struct {
	App *App
	// Policy holds the policy flags and --escalate, for beginWith.
	Policy PolicyFlags

	// Context prints the sandbox:policy block for a model's context
	// instead of the JSON result; with Verbose, the long block that
	// lists every glob, cache and rule.
	Context bool
	// Verbose prints every setting, at its default too, and what holds
	// for the shell in words; without it the result is the short one
	// (PolicyResult.short).
	Verbose bool
}

// NewCmdPolicy returns the policy command; runF replaces policyRun in tests.
func NewCmdPolicy(app *App, runF func(*PolicyOptions) error) *cobra.Command {
	opts := &PolicyOptions{App: app}
	c := &cobra.Command{
		Use:   "policy",
		Short: "Print the effective policy, where each setting came from, and the writable roots",
		Example: `  dsh-fs policy
  dsh-fs policy --verbose   # every setting with its origin, the shell's layers in words
  dsh-fs policy --context   # the sandbox:policy block for a model's context
  dsh-fs policy --context --verbose   # that block with every glob, cache and rule`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Policy = policyFlagsOf(c)
			if runF != nil {
				return runF(opts)
			}
			return policyRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.Context, "context", false, "print the sandbox:policy block a harness adds to the model's context")
	c.Flags().BoolVar(&opts.Verbose, "verbose", false, "also print the settings at their defaults and what holds for the shell in words; with --context, the long block")
	return c
}

// PolicyResult is the result of policy and of the MCP server's dsh_policy.
type PolicyResult struct {
	// ConfigFile is the loaded config file of highest precedence.
	ConfigFile    string                `json:"config_file"`
	ConfigFiles   []config.File         `json:"config_files"`
	Settings      []config.Value        `json:"settings"`
	Ceilings      ceilings              `json:"ceilings"`
	WritableRoots []sandbox.Root        `json:"writable_roots"`
	NotWritable   []sandbox.RefusedRoot `json:"not_writable"`
	Protected     []string              `json:"protected"`
	// GitProtected are the parts of every git directory that stay
	// read-only whatever the globs (sandbox.GitProtectedPart).
	GitProtected []string `json:"git_protected"`
	DenyRead     []string `json:"deny_read"`
	// ReadWithin, only where reads are confined (dsh-fs mcp), are the
	// folders they may reach besides the writable roots in
	// workspace-write; [] reaches none.
	ReadWithin  *[]string      `json:"read_within,omitempty"`
	Enforcement sandbox.Layers `json:"enforcement"`
	// Shell is what fences the model's shell, beside the file tool.
	Shell shellLayers `json:"shell"`
}

// WriteText writes r for people (--output text): the settings with their
// origins, the roots, the layers, and what holds for the shell.
func (r PolicyResult) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range r.Settings {
		origin := string(v.Source)
		if v.Name != "" {
			origin += " " + v.Name
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\n", v.Key, v.Trust, origin, v.Value)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nwritable roots:")
	for _, root := range r.WritableRoots {
		fmt.Fprintf(w, "  %s (%s)\n", root.Path, root.Origin)
	}
	if len(r.NotWritable) > 0 {
		fmt.Fprintln(w, "\nnot writable:")
		for _, root := range r.NotWritable {
			fmt.Fprintf(w, "  %s (%s: %s, %s)\n", root.Path, root.Origin, root.Reason, root.Matched)
		}
	}
	fmt.Fprintf(w, "\nenforcement: %s (landlock ABI %d)\n", strings.Join(r.Enforcement.Layers, ", "), r.Enforcement.LandlockABI)
	sh := r.Shell
	if sh.Session != "" {
		fmt.Fprintf(w, "\nshell (dsh-fs exec session %s):\n", sh.Session)
	} else {
		fmt.Fprintln(w, "\nshell:")
	}
	if sh.Writes == "" {
		// The short result: what holds, without the words (--verbose).
		_, err := fmt.Fprintf(w, "  writes fenced: %t\n  protected held: %t\n  deny_read held: %t\n  outside read-only: %t\n  git held: %t\n",
			sh.WritesFenced, sh.ProtectedHeld, sh.DenyReadHeld, sh.OutsideReadOnlyHeld, sh.GitHeld)
		return err
	}
	_, err := fmt.Fprintf(w, "  writes: %s\n  protected: %s\n  deny_read: %s\n  outside read-only: %s\n  escalation: %s\n",
		sh.Writes, sh.Protected, sh.DenyRead, sh.OutsideReadOnly, sh.Escalation)
	if err == nil {
		_, err = fmt.Fprintf(w, "  git: %s\n", sh.Git)
	}
	return err
}

// shellLayers says, per layer, what holds for the model's shell: inside a
// dsh-fs exec session what exec applied, outside one nothing, and what
// exec would apply on this machine (docs/design.md §10).
type shellLayers struct {
	// Session is the record of the session this call runs in; "" outside
	// one.
	Session       string `json:"session"`
	WritesFenced  bool   `json:"writes_fenced"`
	Writes        string `json:"writes,omitempty"`
	ProtectedHeld bool   `json:"protected_held"`
	Protected     string `json:"protected,omitempty"`
	DenyReadHeld  bool   `json:"deny_read_held"`
	DenyRead      string `json:"deny_read,omitempty"`
	// SocketsHeld says no unix socket outside the session but the
	// allowed ones is reachable from the shell; Sockets says how.
	SocketsHeld bool   `json:"sockets_held"`
	Sockets     string `json:"sockets,omitempty"`
	// NetworkHeld says the shell reaches over the network only what the
	// network setting allows; Network says how (exec_network.go).
	NetworkHeld bool   `json:"network_held"`
	Network     string `json:"network,omitempty"`
	// OutsideReadOnlyHeld says everything outside the writable roots is
	// read-only for the shell, metadata included (the mount layer's
	// read-only tree); OutsideReadOnly says what holds, or why not.
	OutsideReadOnlyHeld bool   `json:"outside_read_only_held"`
	OutsideReadOnly     string `json:"outside_read_only,omitempty"`
	Escalation          string `json:"escalation,omitempty"`
	// TerminalHeld says the session's shell never holds the person's
	// terminal (its own pseudo-terminal, TIOCSTI refused);
	// ProcessesHeld that nothing it started outlives it.
	TerminalHeld  bool   `json:"terminal_held"`
	Terminal      string `json:"terminal,omitempty"`
	ProcessesHeld bool   `json:"processes_held"`
	Processes     string `json:"processes,omitempty"`
	// GitHeld says code planted in a git directory during the session is
	// neutralized when it ends (the git guard).
	GitHeld bool   `json:"git_held"`
	Git     string `json:"git,omitempty"`
	// Mounts are the paths the session's mount layer covers; null
	// without one.
	Mounts         *sandbox.MountPlan `json:"mounts"`
	PrivilegesHeld bool               `json:"privileges_held"`
	Privileges     string             `json:"privileges,omitempty"`
	ScopesHeld     bool               `json:"scopes_held"`
	Scopes         string             `json:"scopes,omitempty"`
	// CachesHeld says the toolchain caches are writable for the shell
	// without the person's own changing (a copy-on-write overlay, or a
	// writable root); Caches says how, or why not, and CacheList how
	// the shell sees each cache ([] outside a session).
	CachesHeld bool         `json:"caches_held"`
	Caches     string       `json:"caches,omitempty"`
	CacheList  []plan.Cache `json:"cache_list"`
}

// newShellLayers describes the shell's fence under s.
func newShellLayers(s *config.Settings) shellLayers {
	p := s.Policy
	rec := s.Session
	if rec == nil {
		l := shellLayers{Escalation: "none for the shell; dsh-fs calls escalate as the approval says"}
		abi, why, err := sandbox.TreeLayer(p)
		scopes := "dsh-fs exec could not: " + why
		if abi > 0 {
			scopes = scopesText(abi, "dsh-fs exec would scope them here")
		}
		switch {
		case err != nil:
			why = err.Error()
		case abi > 0:
			why = fmt.Sprintf("dsh-fs exec would apply Landlock ABI %d here", abi)
		default:
			why = "dsh-fs exec could not: " + why
		}
		l.Writes = "not fenced: no dsh-fs exec session (" + why + ")"
		mounts := "dsh-fs exec would bind them read-only here"
		if ok, why := sandbox.MountLayer(); !ok {
			mounts = "dsh-fs exec could not: " + why
		}
		l.Protected = "not held for the shell: no dsh-fs exec session (" + mounts + ")"
		l.DenyRead = "not held for the shell: no dsh-fs exec session (" + strings.Replace(mounts, "bind them read-only", "hide them", 1) + ")"
		l.Privileges = "not held for the shell: no dsh-fs exec session (dsh-fs exec would leave it " +
			privilegesText(supervisor.Privileges(p, sandbox.UserNamespace() && func() bool { ok, _ := sandbox.MountLayer(); return ok }())) + ")"
		l.Scopes = "not held for the shell: no dsh-fs exec session (" + scopes + ")"
		l.Sockets = supervisor.SocketsOutsideText(p)
		l.Network = supervisor.NetworkOutsideText(p)
		outside := "dsh-fs exec would make everything outside the writable roots read-only here"
		if ok, why := sandbox.MountLayer(); !ok {
			outside = "dsh-fs exec could not: " + why
		} else if ok, why := sandbox.ReadOnlyTree(); !ok {
			outside = "dsh-fs exec could not: " + why
		}
		l.OutsideReadOnly = "not held for the shell: no dsh-fs exec session (" + outside + ")"
		l.Terminal = "not held for the shell: no dsh-fs exec session (" + wouldTerminal() + ")"
		processes := "dsh-fs exec would give it a PID namespace here"
		if ok, why := sandbox.MountLayer(); !ok {
			processes = "dsh-fs exec could not: " + why
		}
		l.Processes = "not held for the shell: no dsh-fs exec session (" + processes + ")"
		git := "dsh-fs exec would neutralize code-running git parts planted in the writable roots here"
		if p.Mode == policy.DangerFullAccess {
			git = "dsh-fs exec would not: danger-full-access mode"
		}
		l.Git = "not held for the shell: no dsh-fs exec session (" + git + ")"
		l.Caches = "not held for the shell: no dsh-fs exec session (" + supervisor.WouldCaches(s) + ")"
		l.CacheList = []plan.Cache{}
		return l
	}
	l := shellLayers{Session: s.SessionPath, Mounts: rec.Shell.Mounts,
		OutsideReadOnlyHeld: rec.Shell.OutsideReadOnlyHeld, OutsideReadOnly: rec.Shell.OutsideReadOnly}
	switch {
	case rec.Shell.Landlock == 0:
		l.Writes = "not fenced: " + rec.Shell.Kernel
	case len(rec.Roots) == 0:
		l.WritesFenced, l.Writes = true, fmt.Sprintf("Landlock ABI %d: no writes but the terminal and null devices", rec.Shell.Landlock)
	default:
		l.WritesFenced, l.Writes = true, fmt.Sprintf("Landlock ABI %d: writes only beneath %s and to the terminal and null devices", rec.Shell.Landlock, strings.Join(rec.Roots, ", "))
	}
	if m := rec.Shell.Mounts; m != nil {
		l.ProtectedHeld, l.Protected = true, fmt.Sprintf("%d protected paths that existed at the start are bound read-only", len(m.ReadOnly))
		l.DenyReadHeld, l.DenyRead = true, fmt.Sprintf("%d deny_read paths that existed at the start are hidden", len(m.Hidden)+len(m.HiddenFiles))
		unsearched := mountsUnsearchedText(m)
		l.Protected += unsearched
		l.DenyRead += unsearched
		l.DenyRead += m.ReadViewText()
	} else {
		l.Protected = "not held for the shell: " + rec.Shell.MountsWhy
		l.DenyRead = "not held for the shell: " + rec.Shell.MountsWhy
	}
	l.PrivilegesHeld = rec.Shell.Privileges == wire.PrivilegesNone
	l.Privileges = privilegesText(rec.Shell.Privileges)
	l.ScopesHeld = rec.Shell.Scoped
	l.Scopes = scopesText(rec.Shell.Landlock, "no signal and no abstract unix socket reaches a process outside the session")
	if !rec.Shell.Scoped && rec.Shell.Landlock == 0 {
		l.Scopes = "not held: " + rec.Shell.Kernel
	}
	l.SocketsHeld, l.Sockets = rec.Shell.SocketsHeld, rec.Shell.Sockets
	l.NetworkHeld, l.Network = supervisor.NetworkRecordText(rec.Shell)
	if l.Sockets == "" {
		l.Sockets = "not held for the shell: the session's record says nothing of sockets"
	}
	l.TerminalHeld, l.Terminal = rec.Shell.TerminalHeld, rec.Shell.Terminal
	l.ProcessesHeld, l.Processes = rec.Shell.ProcessesHeld, rec.Shell.Processes
	l.GitHeld, l.Git = rec.Shell.GitHeld, rec.Shell.Git
	if l.Git == "" {
		l.Git = "not held: the session's supervisor has no git guard"
	}
	l.CachesHeld, l.Caches = supervisor.CachesText(rec.Shell.Caches)
	l.CacheList = nonNilSlice(rec.Shell.Caches)
	l.Escalation = "none"
	if rec.Shell.Broker {
		l.Escalation = "--escalate is sent to the dsh-fs exec supervisor, whose approval (" + string(p.Approval) + ") decides"
	}
	return l
}

// privilegesText says what a shell keeps of its privileges
// (wire.Shell.Privileges).
func privilegesText(p string) string {
	switch p {
	case wire.PrivilegesNone:
		return "no capability in any set (bounding and ambient included) and no_new_privs, as root too"
	case wire.PrivilegesNoNewPrivs:
		return "no capability to use and no_new_privs; the bounding set is kept (a user that is not root, without a user namespace, cannot empty it)"
	}
	return "every privilege it has: danger-full-access mode"
}

// scopesText says what Landlock's scopes do at ABI abi, held saying
// what they do when they hold.
func scopesText(abi int, held string) string {
	if kernel.ScopesHeld(abi) {
		return held
	}
	if abi == 0 {
		return "this kernel has no Landlock"
	}
	return fmt.Sprintf("Landlock ABI %d has no scopes (6 or newer has): signals and abstract unix sockets reach outside", abi)
}

// wouldTerminal says what dsh-fs exec would do with the person's
// terminal on this machine.
func wouldTerminal() string {
	if !kernel.SeccompSupported() {
		return "dsh-fs exec could not: this kernel has no seccomp filters to refuse TIOCSTI"
	}
	return "dsh-fs exec would give the session a pseudo-terminal of its own and refuse TIOCSTI and TIOCLINUX here"
}

// ceilings are the limits only trusted sources set: how far an escalation
// may reach, who approves it, where a session may add roots and which
// folders may be its workspace.
type ceilings struct {
	MaxMode    policy.Mode     `json:"max_mode"`
	Approval   policy.Approval `json:"approval"`
	AllowRoots []string        `json:"allow_roots"`
	Workspaces []string        `json:"workspaces"`
}

func policyRun(opts *PolicyOptions) error {
	call, err := opts.App.beginWith(opts.Policy, "policy", "")
	if err != nil {
		return err
	}
	p := call.settings.Policy
	roots, err := call.fence.Roots()
	if err != nil {
		return err
	}
	if opts.Context {
		block := contextBlock(p, roots, call.settings.Session)
		if !opts.Verbose {
			block = shortBlock(p, roots, call.settings.Session)
		}
		_, err := io.WriteString(opts.App.Stdout, block)
		return err
	}
	res, err := NewPolicyResult(call.settings, roots)
	if err != nil {
		return err
	}
	if !opts.Verbose {
		res = res.short()
	}
	return call.print(res)
}

// short is r without what a model rarely needs and pays for on every
// call (4.3 KB): the settings left at their defaults, and the
// shell's layers in words (their booleans stay). --verbose keeps them.
func (r PolicyResult) short() PolicyResult {
	set := []config.Value{}
	for _, v := range r.Settings {
		if v.Source != config.KindDefault {
			set = append(set, v)
		}
	}
	r.Settings = set
	sh := r.Shell
	r.Shell = shellLayers{Session: sh.Session, WritesFenced: sh.WritesFenced, ProtectedHeld: sh.ProtectedHeld,
		DenyReadHeld: sh.DenyReadHeld, SocketsHeld: sh.SocketsHeld, NetworkHeld: sh.NetworkHeld,
		OutsideReadOnlyHeld: sh.OutsideReadOnlyHeld, TerminalHeld: sh.TerminalHeld, ProcessesHeld: sh.ProcessesHeld,
		GitHeld: sh.GitHeld, Mounts: sh.Mounts, PrivilegesHeld: sh.PrivilegesHeld, ScopesHeld: sh.ScopesHeld,
		CachesHeld: sh.CachesHeld, CacheList: sh.CacheList}
	return r
}

// NewPolicyResult is what policy prints of the settings s, whose fence
// has the writable roots roots.
func NewPolicyResult(s *config.Settings, roots []sandbox.Root) (PolicyResult, error) {
	p := s.Policy
	refused, err := sandbox.RefusedRoots(p)
	if err != nil {
		return PolicyResult{}, err
	}
	files := s.Files
	configFile := ""
	if len(files) > 0 {
		configFile = files[len(files)-1].Path
	}
	var readWithin *[]string
	if p.ReadWithin != nil {
		readWithin = &p.ReadWithin
	}
	return PolicyResult{
		ConfigFile:  configFile,
		ConfigFiles: nonNilSlice(files),
		Settings:    s.Values,
		Ceilings: ceilings{MaxMode: p.MaxMode, Approval: p.Approval,
			AllowRoots: nonNilSlice(p.AllowRoots), Workspaces: nonNilSlice(p.Workspaces)},
		WritableRoots: nonNilSlice(roots),
		NotWritable:   nonNilSlice(refused),
		Protected:     nonNilSlice(p.Protected),
		GitProtected:  sandbox.GitProtectedNames(),
		DenyRead:      nonNilSlice(p.DenyRead),
		ReadWithin:    readWithin,
		Enforcement:   sandbox.ActiveLayers(p),
		Shell:         newShellLayers(s),
	}, nil
}

// DescribePolicy is NewPolicyResult for a front end that passes it on
// as it is (dsh-fs mcp's dsh_policy).
func DescribePolicy(s *config.Settings, roots []sandbox.Root) (any, error) {
	return NewPolicyResult(s, roots)
}

// nonNilSlice makes a nil list an empty one, so JSON says [] and not null.
func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// shortBlock is the sandbox:policy block a harness puts in the model's
// context (policyview.Short), inside a dsh-fs exec session (rec) or not.
func shortBlock(p policy.Policy, roots []sandbox.Root, rec *wire.Record) string {
	sh := policyview.Shell{Session: rec != nil}
	if rec != nil {
		for _, c := range rec.Shell.Caches {
			sh.CachesCopied = sh.CachesCopied || c.Layer == plan.CacheOverlay
		}
	}
	return policyview.Short(p, roots, sh)
}

// contextBlock is the verbose sandbox:policy text (policy --context
// --verbose): every glob, cache and line the short block leaves out. It depends on the policy alone, never on time or
// process, so an identical policy gives identical bytes and a prompt cache
// stays warm. Inside a dsh-fs exec session (rec) it says that the shell
// is held to the same fence and how it sees the toolchain caches.
func contextBlock(p policy.Policy, roots []sandbox.Root, rec *wire.Record) string {
	var b strings.Builder
	b.WriteString("<sandbox:policy>\n")
	policyview.FenceLines(&b, p, roots)
	if rec != nil {
		b.WriteString("shell: this dsh-fs exec session's shell is held to the same fence: a refused write fails with \"Read-only file system\" or \"Permission denied\", and deny_read paths look empty; dsh-fs stat PATH says which rule holds there and what lifts it\n")
		if len(rec.Shell.Caches) > 0 {
			_, text := supervisor.CachesText(rec.Shell.Caches)
			fmt.Fprintf(&b, "toolchain caches in the shell: %s\n", text)
		}
	} else {
		b.WriteString("shell: not fenced (no dsh-fs exec session); dsh-fs stat PATH says whether the file tool would write there\n")
	}
	b.WriteString(supervisor.NetworkContextLine(p))
	fmt.Fprintf(&b, "a denied call fails with FS_SANDBOX_DENIED and %s\n", policy.Marker(p.Mode))
	b.WriteString("flags, variables and config files can only narrow this fence")
	if p.Approval != policy.ApprovalNever {
		b.WriteString("; only --escalate, approved by a person, widens it")
	}
	b.WriteString("\n")
	switch p.Approval {
	case policy.ApprovalNever:
		b.WriteString("escalation: disabled; ask the user to change the policy\n")
	case policy.ApprovalSupervisor:
		fmt.Fprintf(&b, "escalation: only under a dsh-fs exec session, whose person approves; retry one denied call with --escalate <mode> (up to %s)\n", p.MaxMode)
	default:
		fmt.Fprintf(&b, "escalation: retry one denied call with --escalate <mode> (up to %s) only when the user agrees\n", p.MaxMode)
	}
	b.WriteString("</sandbox:policy>\n")
	return b.String()
}

// mountsUnsearchedText is what the mount plan m says it did not search,
// for the protected and deny_read lines: places past a walk's budget,
// and folders dsh-fs could not read, hidden whole since what they hold
// was not judged. "" when it searched everything.
func mountsUnsearchedText(m *sandbox.MountPlan) string {
	text := ""
	if len(m.Partial) > 0 {
		text += "; not searched past the walk budget in " + strings.Join(m.Partial, ", ")
	}
	if len(m.Unreadable) > 0 {
		text += "; hidden whole, as dsh-fs could not read them: " + strings.Join(m.Unreadable, ", ")
	}
	return text
}
