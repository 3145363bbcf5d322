// Package report is the policy in words, whole: what dsh-fs policy and
// the MCP server's dsh_policy give (New), its short form and its text
// for people, and the sandbox:policy blocks of policy --context (Block).
// What dsh-fs exec does, or would do on this machine, for the shell, only
// the supervisor can say: those words come from internal/shell.
package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/pathmatch"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Policy is the policy in words, as dsh-fs policy prints it and the MCP
// server's dsh_policy returns it: each setting with its origin, the
// ceilings, the roots, the globs, the kernel's layers and what holds for
// the shell. Its JSON fields are an API: new ones may be added, none
// renamed.
type Policy struct {
	// ConfigFile is the loaded config file of highest precedence.
	ConfigFile    string                `json:"config_file"`
	ConfigFiles   []config.File         `json:"config_files"`
	Settings      []config.Value        `json:"settings"`
	Ceilings      ceilings              `json:"ceilings"`
	WritableRoots []sandbox.Root        `json:"writable_roots"`
	NotWritable   []sandbox.RefusedRoot `json:"not_writable"`
	Protected     []string              `json:"protected"`
	// GitProtected are the parts of every git directory that stay
	// read-only whatever the globs (pathmatch.GitProtectedPart).
	GitProtected []string `json:"git_protected"`
	DenyRead     []string `json:"deny_read"`
	// ReadWithin, only where reads are confined (dsh-fs mcp), are the
	// folders they may reach besides the writable roots in
	// workspace-write; [] reaches none.
	ReadWithin  *[]string      `json:"read_within,omitempty"`
	Enforcement sandbox.Layers `json:"enforcement"`
	// Shell is what fences the model's shell, beside the file tool.
	Shell ShellLayers `json:"shell"`
}

// WriteText writes r for people (--output text): the settings with their
// origins, the roots, the layers, and what holds for the shell.
func (r Policy) WriteText(w io.Writer) error {
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
	if r.Enforcement.Note != "" {
		fmt.Fprintf(w, "  %s\n", r.Enforcement.Note)
	}
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

// ceilings are the limits only trusted sources set: how far an escalation
// may reach, who approves it, where a session may add roots and which
// folders may be its workspace.
type ceilings struct {
	MaxMode    policy.Mode     `json:"max_mode"`
	Approval   policy.Approval `json:"approval"`
	AllowRoots []string        `json:"allow_roots"`
	Workspaces []string        `json:"workspaces"`
}

// Short is r without what a model rarely needs and pays for on every
// call (4.3 KB): the settings left at their defaults, and the
// shell's layers in words (their booleans stay). --verbose keeps them.
func (r Policy) Short() Policy {
	set := []config.Value{}
	for _, v := range r.Settings {
		if v.Source != config.KindDefault {
			set = append(set, v)
		}
	}
	r.Settings = set
	sh := r.Shell
	r.Shell = ShellLayers{Session: sh.Session, WritesFenced: sh.WritesFenced, ProtectedHeld: sh.ProtectedHeld,
		DenyReadHeld: sh.DenyReadHeld, SocketsHeld: sh.SocketsHeld, NetworkHeld: sh.NetworkHeld,
		OutsideReadOnlyHeld: sh.OutsideReadOnlyHeld, TerminalHeld: sh.TerminalHeld, ProcessesHeld: sh.ProcessesHeld,
		GitHeld: sh.GitHeld, Mounts: sh.Mounts, PrivilegesHeld: sh.PrivilegesHeld, ScopesHeld: sh.ScopesHeld,
		CachesHeld: sh.CachesHeld, CacheList: sh.CacheList}
	return r
}

// New is the policy in words of the settings s, whose fence has the
// writable roots roots. It reads the machine (which kernel layers
// dsh-fs exec would apply here) but changes nothing.
func New(s *config.Settings, roots []sandbox.Root) (Policy, error) {
	p := s.Policy
	refused, err := sandbox.RefusedRoots(p)
	if err != nil {
		return Policy{}, err
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
	return Policy{
		ConfigFile:  configFile,
		ConfigFiles: nonNilSlice(files),
		Settings:    s.Values,
		Ceilings: ceilings{MaxMode: p.MaxMode, Approval: p.Approval,
			AllowRoots: nonNilSlice(p.AllowRoots), Workspaces: nonNilSlice(p.Workspaces)},
		WritableRoots: nonNilSlice(roots),
		NotWritable:   nonNilSlice(refused),
		Protected:     nonNilSlice(p.Protected),
		GitProtected:  pathmatch.GitProtectedNames(),
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
