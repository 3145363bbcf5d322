package cmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/config"
	"github.com/dshfs/dsh-fs/pkg/sandbox"
)

// PolicyOptions are the inputs of policy.
type PolicyOptions struct {
	App     *App
	Command *cobra.Command

	// Context prints the sandbox:policy block for a model's context
	// instead of the JSON result.
	Context bool
}

// NewCmdPolicy returns the policy command; runF replaces policyRun in tests.
func NewCmdPolicy(app *App, runF func(*PolicyOptions) error) *cobra.Command {
	opts := &PolicyOptions{App: app}
	c := &cobra.Command{
		Use:   "policy",
		Short: "Print the effective policy, where each setting came from, and the writable roots",
		Example: `  dsh-fs policy
  dsh-fs policy --context   # the sandbox:policy block for a model's context`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = c
			if runF != nil {
				return runF(opts)
			}
			return policyRun(opts)
		},
	}
	c.Flags().BoolVar(&opts.Context, "context", false, "print the sandbox:policy block a harness adds to the model's context")
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
	DenyRead      []string              `json:"deny_read"`
	// ReadWithin, only where reads are confined (dsh-fs mcp), are the
	// folders they may reach besides the writable roots in
	// workspace-write; [] reaches none.
	ReadWithin  *[]string      `json:"read_within,omitempty"`
	Enforcement sandbox.Layers `json:"enforcement"`
	// Shell is what fences the model's shell, beside the file tool.
	Shell shellLayers `json:"shell"`
}

// shellLayers says, per layer, what holds for the model's shell: inside a
// dsh-fs exec session what exec applied, outside one nothing, and what
// exec would apply on this machine (docs/design.md §10).
type shellLayers struct {
	// Session is the record of the session this call runs in; "" outside
	// one.
	Session       string `json:"session"`
	WritesFenced  bool   `json:"writes_fenced"`
	Writes        string `json:"writes"`
	ProtectedHeld bool   `json:"protected_held"`
	Protected     string `json:"protected"`
	DenyReadHeld  bool   `json:"deny_read_held"`
	DenyRead      string `json:"deny_read"`
	Escalation    string `json:"escalation"`
	// GitHeld says code planted in a git directory during the session is
	// neutralized when it ends (the git guard).
	GitHeld bool   `json:"git_held"`
	Git     string `json:"git"`
	// Mounts are the paths the session's mount layer covers; null
	// without one.
	Mounts *sandbox.MountPlan `json:"mounts"`
}

// newShellLayers describes the shell's fence under s.
func newShellLayers(s *config.Settings) shellLayers {
	p := s.Policy
	rec := s.Session
	if rec == nil {
		l := shellLayers{Escalation: "none for the shell; dsh-fs calls escalate as the approval says"}
		abi, why, err := sandbox.TreeLayer(p)
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
		git := "dsh-fs exec would neutralize code-running git parts planted in the writable roots here"
		if p.Mode == sandbox.DangerFullAccess {
			git = "dsh-fs exec would not: danger-full-access mode"
		}
		l.Git = "not held for the shell: no dsh-fs exec session (" + git + ")"
		return l
	}
	l := shellLayers{Session: s.SessionPath, Mounts: rec.Shell.Mounts}
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
		if len(m.Partial) > 0 {
			l.Protected += "; not searched past the walk budget in " + strings.Join(m.Partial, ", ")
			l.DenyRead += "; not searched past the walk budget in " + strings.Join(m.Partial, ", ")
		}
	} else {
		l.Protected = "not held for the shell: " + rec.Shell.MountsWhy
		l.DenyRead = "not held for the shell: " + rec.Shell.MountsWhy
	}
	l.GitHeld, l.Git = rec.Shell.GitHeld, rec.Shell.Git
	if l.Git == "" {
		l.Git = "not held: the session's supervisor has no git guard"
	}
	l.Escalation = "none"
	if rec.Shell.Broker {
		l.Escalation = "--escalate is sent to the dsh-fs exec supervisor, whose approval (" + string(p.Approval) + ") decides"
	}
	return l
}

// ceilings are the limits only trusted sources set: how far an escalation
// may reach, who approves it, where a session may add roots and which
// folders may be its workspace.
type ceilings struct {
	MaxMode    sandbox.Mode     `json:"max_mode"`
	Approval   sandbox.Approval `json:"approval"`
	AllowRoots []string         `json:"allow_roots"`
	Workspaces []string         `json:"workspaces"`
}

func policyRun(opts *PolicyOptions) error {
	call, err := opts.App.begin(opts.Command, "policy", "")
	if err != nil {
		return err
	}
	p := call.settings.Policy
	roots, err := call.fence.Roots()
	if err != nil {
		return err
	}
	if opts.Context {
		_, err := io.WriteString(opts.App.Stdout, contextBlock(p, roots))
		return err
	}
	res, err := NewPolicyResult(call.settings, roots)
	if err != nil {
		return err
	}
	return call.print(res)
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
		DenyRead:      nonNilSlice(p.DenyRead),
		ReadWithin:    readWithin,
		Enforcement:   sandbox.ActiveLayers(p),
		Shell:         newShellLayers(s),
	}, nil
}

// nonNilSlice makes a nil list an empty one, so JSON says [] and not null.
func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// contextBlock is the short sandbox:policy text a harness puts in the
// model's context. It depends on the policy alone, never on time or
// process, so an identical policy gives identical bytes and a prompt cache
// stays warm.
func contextBlock(p sandbox.Policy, roots []sandbox.Root) string {
	var b strings.Builder
	b.WriteString("<sandbox:policy>\n")
	FenceLines(&b, p, roots)
	fmt.Fprintf(&b, "a denied call fails with FS_SANDBOX_DENIED and %s\n", sandbox.Marker(p.Mode))
	b.WriteString("flags, variables and config files can only narrow this fence")
	if p.Approval != sandbox.ApprovalNever {
		b.WriteString("; only --escalate, approved by a person, widens it")
	}
	b.WriteString("\n")
	switch p.Approval {
	case sandbox.ApprovalNever:
		b.WriteString("escalation: disabled; ask the user to change the policy\n")
	case sandbox.ApprovalSupervisor:
		fmt.Fprintf(&b, "escalation: only under a dsh-fs exec session, whose person approves; retry one denied call with --escalate <mode> (up to %s)\n", p.MaxMode)
	default:
		fmt.Fprintf(&b, "escalation: retry one denied call with --escalate <mode> (up to %s) only when the user agrees\n", p.MaxMode)
	}
	b.WriteString("</sandbox:policy>\n")
	return b.String()
}

// FenceLines are the lines of the sandbox:policy block that say what the
// fence lets through, shared by policy --context and the instructions of
// dsh-fs mcp.
func FenceLines(b *strings.Builder, p sandbox.Policy, roots []sandbox.Root) {
	fmt.Fprintf(b, "mode: %s\n", p.Mode)
	switch p.Mode {
	case sandbox.ReadOnly:
		b.WriteString("writes: none; every write, edit and mkdir is denied\n")
	case sandbox.WorkspaceWrite:
		if len(roots) == 0 {
			b.WriteString("writable roots: none\n")
		} else {
			fmt.Fprintf(b, "writable roots: %s\n", strings.Join(sandbox.RootPaths(roots), ", "))
		}
		fmt.Fprintf(b, "protected, never written: %s\n", strings.Join(p.Protected, ", "))
	case sandbox.DangerFullAccess:
		b.WriteString("writes: anywhere the operating system allows\n")
	}
	if len(p.DenyRead) > 0 {
		fmt.Fprintf(b, "reads: everywhere except %s\n", strings.Join(p.DenyRead, ", "))
	} else {
		b.WriteString("reads: everywhere\n")
	}
}
