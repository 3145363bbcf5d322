//go:build unix

package supervisor

import (
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/session/plan"
	"github.com/dshfs/dsh-fs/internal/session/wire"
)

// The session's audit log (docs/design.md §10): where the trusted
// audit_log names a file, the supervisor appends a line for the
// session's start and end, each escalation asked and answered, each
// brokered call and each decision of the network proxy (internal/audit).
// A nested session writes none: the outer supervisor, which carries out
// its escalations, writes their lines.

// startAudit opens the audit log the settings name, if any, and writes
// the session's start. A log that cannot be opened or written keeps the
// session from starting: a configured audit trail is never skipped.
func (s *supervisor) startAudit() error {
	if s.settings.AuditLog == "" || s.nested {
		return nil
	}
	roots := append(slices.Clone(s.rec.Roots), directCaches(s.rec.Shell.Caches)...)
	log, err := audit.Open(s.settings.AuditLog, s.rec.ID(), roots)
	if err != nil {
		return err
	}
	s.audit, s.callRunner.notes = log, log
	return log.Write(audit.Event{Event: audit.EventSessionStart, Start: auditStart(s.settings, s.rec, s.record, s.opts.Argv)})
}

// endAudit writes the session's end: CMD's exit status, or why no CMD
// ran, and the git guard's report. A write that failed during the
// session is said on exec's standard error.
func (s *supervisor) endAudit(status int, runErr error) {
	if s.audit == nil {
		return
	}
	end := &audit.End{Status: status}
	if runErr != nil {
		end.Error = runErr.Error()
	}
	if s.gitReport != nil && !s.gitReport.Empty() {
		end.GitGuard = s.gitReport
	}
	s.audit.Write(audit.Event{Event: audit.EventSessionEnd, End: end})
	if err := s.audit.Failed(); err != nil {
		enc := json.NewEncoder(s.log())
		enc.SetEscapeHTML(false)
		enc.Encode(auditFailure{Op: "exec", AuditLog: err.Error()})
	}
}

// auditFailure is exec's line on its standard error for an audit log it
// could not write to during the session.
type auditFailure struct {
	Op       string `json:"op"`
	AuditLog string `json:"audit_log_failed"`
}

// runAudited carries out req as run does, and writes its line.
func (s *supervisor) runAudited(req wire.Request) wire.Reply {
	rep := s.run(req)
	s.audit.Write(audit.Brokered(req, rep))
	return rep
}

// directCaches are the caches the shell writes in place (caches_writable:
// direct): as writable as the roots.
func directCaches(caches []plan.Cache) []string {
	var out []string
	for _, c := range caches {
		if c.Layer == plan.CacheDirect {
			out = append(out, c.Path)
		}
	}
	return out
}

// auditStart is the start line's plan: what the record pins and the
// layers it holds, the sources of the settings that are not defaults,
// and the command, its arguments summarized.
func auditStart(s *config.Settings, rec *wire.Record, record string, argv []string) *audit.Start {
	p, sh := s.Policy, rec.Shell
	st := &audit.Start{Mode: string(p.Mode), Cwd: p.Cwd, Roots: rec.Roots, Network: string(p.Network), NetworkAllow: p.NetworkAllow,
		Approval: string(p.Approval), NetworkApproval: string(p.NetworkApproval), Enforce: string(p.Enforce),
		Landlock: sh.Landlock, MountsHeld: sh.Mounts != nil, NetworkHeld: sh.NetworkHeld, ProcessesHeld: sh.ProcessesHeld,
		GitHeld: sh.GitHeld, ConfigFiles: p.ConfigFiles, Record: record, SupervisorUser: os.Getuid()}
	if len(argv) > 0 {
		st.Program = argv[0]
		b, _ := json.Marshal(argv[1:])
		st.Args = audit.Summarize(b)
	}
	for _, v := range s.Values {
		src := audit.Source{Origin: string(v.Source), From: v.Name, Trust: v.Trust}
		if v.Source != config.KindDefault && !slices.Contains(st.Sources, src) {
			st.Sources = append(st.Sources, src)
		}
	}
	return st
}

// auditNotes hands the brokered call c a pipe for its escalations'
// lines, where the session has an audit log; started closes this
// side's copy of the call's end once c started, and wait waits for the
// relay to drain, a bounded while.
type auditNotes struct {
	w    *os.File
	done chan struct{}
}

func (r *callRunner) openNotes(c *exec.Cmd) *auditNotes {
	if r.notes == nil {
		return nil
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil
	}
	c.ExtraFiles = append(c.ExtraFiles, pw)
	c.Env = append(c.Env, audit.NotesEnv+"="+strconv.Itoa(2+len(c.ExtraFiles)))
	n := &auditNotes{w: pw, done: make(chan struct{})}
	go func() {
		defer close(n.done)
		defer pr.Close()
		r.notes.Relay(pr)
	}()
	return n
}

func (n *auditNotes) started() {
	if n != nil {
		n.w.Close()
	}
}

// wait waits for the relay: its pipe ends with the call, whose
// approver never holds it (audit.Notes).
func (n *auditNotes) wait() {
	if n == nil {
		return
	}
	select {
	case <-n.done:
	case <-time.After(5 * time.Second):
	}
}
