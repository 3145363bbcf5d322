//go:build unix

package supervisor

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"

	"github.com/dshfs/dsh-fs/internal/audit"
	"github.com/dshfs/dsh-fs/internal/config"
	"github.com/dshfs/dsh-fs/internal/denials"
	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/gitguard"
	"github.com/dshfs/dsh-fs/internal/kernel"
	"github.com/dshfs/dsh-fs/internal/policy"
	"github.com/dshfs/dsh-fs/internal/sandbox"
	"github.com/dshfs/dsh-fs/internal/session/layout"
	"github.com/dshfs/dsh-fs/internal/session/toolchains"
	"github.com/dshfs/dsh-fs/internal/session/wire"
	"github.com/dshfs/dsh-fs/internal/tty"
)

// Run runs opts.Argv as a session of opts.Settings (docs/design.md §10)
// and returns CMD's exit status, 128+N when signal N ended it. An error
// says why no session ran (CMD not found, a layer that could not be
// readied), with its fserr code; exec then started nothing and left no
// record behind.
func Run(opts Options) (int, error) {
	if len(opts.Argv) == 0 || opts.Settings == nil {
		return 0, fserr.New(fserr.InvalidArgument, "exec: no command to run")
	}
	if err := wslRefusal(opts.Settings.Policy, kernel.WSL()); err != nil {
		return 0, err
	}
	path, err := exec.LookPath(opts.Argv[0])
	if err != nil {
		return 0, fserr.Wrap(fserr.NotFound, "exec: "+opts.Argv[0]+": command not found", err)
	}
	if opts.LookupEnv == nil {
		opts.LookupEnv = os.LookupEnv
	}
	// A session never outlives its supervisor: killed with SIGKILL, the
	// supervisor can neither forward it nor end the session, so the
	// kernel kills the session's first process (or the child that
	// forked it) as its parent dies, and with it, the init of the
	// session's PID namespace, every process in it. The parent-death
	// signal follows the thread that forked, not the process: the
	// session's thread (startInThread) is held until the session ends,
	// and so is this goroutine's, which launches the child
	// (newSupervisor, launch); the Go runtime ends no thread a goroutine
	// holds.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	pr := &probes{base: wire.RuntimeBase()}
	status, failed, err := runOnce(opts, pr, path)
	if err != nil && failed && pr.relied() {
		// A verdict kept by an earlier start was wrong (the kernel
		// refused in the child what it allowed the probe): no CMD ran.
		// The session starts once more, probing, as it would have with
		// nothing kept.
		pr.forget()
		pr.fresh = true
		status, _, err = runOnce(opts, pr, path)
	}
	mark("closed")
	return status, err
}

// runOnce starts a session of opts, whose probes are pr, and runs CMD
// at path in it; failed says the child could not become CMD.
func runOnce(opts Options, pr *probes, path string) (status int, failed bool, err error) {
	sup, err := newSupervisor(opts, pr)
	if err != nil {
		// A supervisor returned with its error is one whose child
		// could not start (launch).
		return 0, sup != nil && sup.childFailed, err
	}
	defer sup.close()
	status, err = sup.runCommand(path, opts.Argv)
	sup.endAudit(status, err)
	return status, sup.childFailed, err
}

// supervisor is the process that starts a session and stays outside it:
// it holds the record and the escalation channel, forwards signals, and
// runs the escalated calls the session sends it.
type supervisor struct {
	// callRunner runs the escalated calls; its self and record are
	// this executable and the session's record.
	callRunner
	opts     Options
	settings *config.Settings
	dir      string // the record's private folder
	empty    string // the empty file the mount layer binds over hidden files
	rec      *wire.Record
	// nested says exec runs inside a session: it writes no record and
	// runs no broker of its own.
	nested bool
	// askMu puts one question at a time to the person at the terminal.
	askMu sync.Mutex
	// sockets are the paths the Landlock socket right is granted on;
	// nil when the kernel has no such right (layout.SocketGrants).
	sockets []string
	// relay stands between the person's terminal and the session's
	// own, while CMD runs; nil when exec's streams hold no terminal.
	relay *tty.Relay
	// stderr relays exec's standard error where it is a pipe (explain.go).
	stderr *tty.StderrRelay
	// git is the git guard's record of the roots' git directories; nil
	// where there is none. gitReport is its report at the end.
	git       *gitguard.Guard
	gitReport *gitguard.Report
	// indexesSaved is closed once the roots' tree indexes are saved
	// (saveIndexes); nil when there is no save.
	indexesSaved chan struct{}
	// audit is the session's audit log (audit.go); nil without one.
	audit *audit.Log
	// childFailed says the child could not become CMD (startChild,
	// sendSpec).
	childFailed bool
	// launched is the session's child once started (launch).
	launched *launched
	// childGone is closed once the child is waited for, after CMD ended
	// (waitSession); close waits for it last.
	childGone <-chan struct{}
	// recordGone is closed once the record and the placeholders are
	// removed beside the end (endRecord); nil where close removes them.
	recordGone <-chan struct{}
	// signalsStopped is closed once exec's signals are no longer
	// caught (release); close waits for it too. nil before.
	signalsStopped <-chan struct{}
}

// newSupervisor resolves the layers of the session of opts.Settings and
// writes its record; pr probes what the kernel allows. Where the child
// could not be started, the supervisor comes back, closed, with the
// error (childFailed).
func newSupervisor(opts Options, pr *probes) (*supervisor, error) {
	s := opts.Settings
	mark("supervisor")
	self, err := os.Executable()
	if err != nil {
		return nil, fserr.Wrap(fserr.IO, "exec: cannot find dsh-fs itself: "+err.Error(), err)
	}
	pr.self = self
	p := s.Policy
	fence := sandbox.NewFence(p)
	roots, err := fence.Roots()
	if err != nil {
		return nil, err
	}
	abi, kernelWhy, err := layout.TreeLayer(p)
	if err != nil {
		return nil, err
	}
	shell := wire.Shell{Landlock: abi, Kernel: kernelWhy, Broker: true, Scoped: abi > 0 && kernel.ScopesHeld(abi),
		Privileges: wire.PrivilegesKept}
	if s.Session != nil {
		return nestedSupervisor(opts, self, NewRecord(s, roots).Roots, shell, socketGrants(p)), nil
	}
	// The toolchains' caches depend on the settings and exec's own
	// environment only: their key's few dozen stats run beside the early
	// layers and the launch, not on the plan's path to the child's spec.
	findCaches := startFindCaches(s)
	// What the child must be given at its start follows from whether
	// there is a mount layer: the child is launched then, while the rest
	// is planned beside it (plan).
	mounts, err := earlyLayers(opts, pr, p, &shell)
	if err != nil {
		return nil, err
	}
	mark("tree-layer")
	rec := NewRecord(s, roots)
	rec.Shell = shell
	sup := &supervisor{opts: opts, settings: s, rec: rec}
	sup.callRunner = callRunner{self: self, ask: sup.askTerminal}
	plans, planning, beside := make(chan planned, 1), false, false
	launchErr := sup.launch(mounts, func() {
		planning = true
		// What the record will take is readied beside the plan, not
		// before, where it would take a processor from the start's own
		// path.
		go warmRecord()
		if !sup.launched.forksChild() {
			// Nothing is forked now: the plan runs on this goroutine
			// once the launch returns. A goroutine of its own waited
			// for a processor there, about a millisecond, while this
			// one, which only waits for it, held one.
			return
		}
		beside = true
		go func() { plans <- sup.plan(pr, roots, mounts, shell, findCaches) }()
	})
	mark("launched")
	var pl planned
	switch {
	case beside:
		pl = <-plans
	case planning && launchErr == nil:
		pl = sup.plan(pr, roots, mounts, shell, findCaches)
	}
	mark("planned")
	sup.dir, sup.callRunner.denials, sup.git, sup.sockets = pl.dir, pl.denials, pl.git, pl.sockets
	if launchErr != nil {
		sup.close()
		return sup, launchErr
	}
	if pl.err != nil {
		sup.close()
		return nil, pl.err
	}
	rec.Shell = pl.shell
	if err := sup.writeRecord(); err != nil {
		sup.close()
		return nil, err
	}
	mark("record")
	return sup, nil
}

// warmRecord builds, beside the plan, encoding/json's encoder of the
// record's types, which json builds by reflection on their first use
// and keeps (about a millisecond of cpu here, the record's nested
// types), where writeRecord would otherwise build it on the start's
// path.
func warmRecord() { json.Marshal(&wire.Record{}) }

// planned is what plan planned of a session; err says why the session
// cannot start, dir is the record's folder where plan made it.
type planned struct {
	shell   wire.Shell
	dir     string
	denials *denials.Log
	git     *gitguard.Guard
	sockets []string
	err     error
}

// plan plans the layers of the session over roots beside the launch of
// its child (launch), from the early layers in shell (earlyLayers):
// the mount layer, the record's folder, the caches, the sockets, the
// read view and the git guard's start; findCaches waits for the
// toolchains' caches (startFindCaches). It reads s's settings and
// options and changes nothing of s: the launch has its own fields, and
// newSupervisor takes what plan returns once both are done. Nothing in
// it needs the child, and the child needs none of it before its spec.
func (s *supervisor) plan(pr *probes, roots []sandbox.Root, mounts bool, shell wire.Shell,
	findCaches func() []toolchains.Cache) (pl planned) {
	opts, p := s.opts, s.settings.Policy
	pl.sockets = socketGrants(p)
	// The record's folder is made beside the mount plan: neither reads
	// the other, and the placeholders that the folder's sweep of
	// stale sessions removes are made afresh after both (writeRecord,
	// layout.RefreshPlaceholders), as they were when one followed the
	// other.
	dirMade := make(chan error, 1)
	var dir string
	go func() {
		xdg, _ := opts.LookupEnv("XDG_RUNTIME_DIR")
		var err error
		dir, err = wire.Dir(xdg, sandbox.RootPaths(roots))
		dirMade <- err
	}()
	if mounts {
		shell.Mounts = planMounts(opts, p, roots)
	}
	mark("plan-mounts")
	if !seatbeltStart { // SeatbeltLayers said what holds
		shell.OutsideReadOnlyHeld, shell.OutsideReadOnly = outsideReadOnlyLayer(shell.Mounts, shell.MountsWhy)
	}
	if err := <-dirMade; err != nil {
		pl.err = fserr.Wrap(fserr.IO, "exec: session record: "+err.Error(), err)
		return pl
	}
	pl.dir = dir
	// Before the child's spec: its mount layer binds the log's folder.
	pl.denials, _ = denials.Open(dir, string(p.Approval)) // nil where it cannot be made: the log reads as empty
	mark("plan-record-dir")
	// The caches' layers are readied (the toolchains' answers awaited,
	// the overlays probed) while the sockets are looked for.
	cachesReady := make(chan cacheSetup, 1)
	go func(mountsWhy string) {
		cachesReady <- readyCaches(pr, dir, s.settings, findCaches(), s.rec.Roots, mountsWhy)
	}(shell.MountsWhy)
	if !seatbeltStart {
		shell.SocketsHeld, shell.Sockets = shellSockets(p, shell.Mounts, shell.MountsWhy)
	}
	mark("plan-sockets")
	if err := applyCaches(<-cachesReady, &shell); err != nil {
		pl.err = fserr.Wrap(fserr.IO, "exec: caches: "+err.Error(), err)
		return pl
	}
	if m := shell.Mounts; m != nil {
		m.PlanReadView(p, sandbox.RootPaths(roots), viewKeeps(s.self, shell.Caches))
	}
	mark("plan-caches")
	// After the caches and the read view: the guard reads the pins and
	// the writable folders of the plan that is applied.
	pl.git = startGitGuard(opts.LookupEnv, s.settings, roots, &shell)
	mark("plan-git-guard")
	pl.shell = shell
	return pl
}

// socketGrants are the paths the Landlock socket right is granted on
// under p (layout.SocketGrants).
func socketGrants(p policy.Policy) []string {
	if layout.SocketLandlock(p) {
		return layout.SocketGrants(p)
	}
	return nil
}

// writeRecord writes the session's record, with the identities the mount
// layer hides and the placeholders it needs, and starts the audit log.
func (s *supervisor) writeRecord() error {
	if err := s.denyIdentities(s.rec.Shell.Mounts); err != nil {
		return fserr.Wrap(fserr.IO, "exec: "+err.Error(), err)
	}
	// What the child will apply, read back from the record (policy,
	// tests): the empty file is known now.
	s.rec.Shell.Plan = s.recordedPlan()
	// Only this session's record stays in sight of the runtime folder;
	// the placeholders of protected paths missing now are made before
	// the record, which names them for their removal.
	var err error
	if s.record, err = wire.WriteWithPlaceholders(s.dir, s.rec, func(m *layout.MountPlan) error {
		m.Runtime, m.Record = filepath.Dir(s.dir), wire.RecordPath(s.dir)
		layout.RefreshPlaceholders(m)
		return layout.MakePlaceholders(m)
	}); err != nil {
		return fserr.Wrap(fserr.IO, "exec: session record: "+err.Error(), err)
	}
	return s.startAudit()
}

// denyIdentities puts in the record the identities of the deny_read
// files with several links that the mount plan m (nil without one) saw,
// and, where m hides files, that of the empty file bound over them, made
// before the record, which names it: a hidden hard link reads as this
// file inside, and the file tool refuses it.
func (s *supervisor) denyIdentities(m *layout.MountPlan) error {
	if m == nil {
		return nil
	}
	s.rec.DenyIdentities = m.DenyIdentities
	if len(m.HiddenFiles)+len(m.HiddenSockets) > 0 {
		empty, id, err := wire.EmptyFile(s.dir)
		if err != nil {
			return err
		}
		s.empty = empty
		s.rec.DenyIdentities = append(s.rec.DenyIdentities, id)
	}
	return nil
}

// nestedSupervisor is the supervisor of a session started inside
// another: the outer session's record, broker and mount layer serve;
// this one only narrows (docs/design.md §10). The outer caches' layers
// are in place, and stay writable.
func nestedSupervisor(opts Options, self string, roots []string, shell wire.Shell, sockets []string) *supervisor {
	s := opts.Settings
	if s.Policy.Mode == policy.WorkspaceWrite {
		shell.Caches = s.Session.Shell.Caches
	}
	return &supervisor{callRunner: callRunner{self: self, record: s.SessionPath}, opts: opts, settings: s, nested: true,
		rec: &wire.Record{Roots: roots, Shell: shell}, sockets: sockets}
}

// earlyLayers decides in shell the layers that follow from whether a
// session of p has a mount layer, which it reports (pr probes a user
// namespace), before anything is planned: the privileges, the terminal,
// the processes and the network. A session started under Seatbelt
// (macOS) has no mount layer, and its layers are SeatbeltLayers'.
func earlyLayers(opts Options, pr *probes, p policy.Policy, shell *wire.Shell) (bool, error) {
	if seatbeltStart {
		in, out, errs := execFiles(opts)
		SeatbeltLayers(p, tty.IsTerminal(in) || tty.IsTerminal(out) || tty.IsTerminal(errs), shell)
		return false, nil
	}
	shell.MountsWhy = mountLayerWhy(pr, p)
	mounts := shell.MountsWhy == ""
	shell.Privileges = Privileges(p, mounts)
	shell.TerminalHeld, shell.Terminal = terminalLayer(opts, mounts)
	shell.ProcessesHeld, shell.Processes = processesLayer(mounts, shell.MountsWhy)
	netPlan := networkLayer(p, mounts, shell.ProcessesHeld)
	if netPlan.missing != "" {
		return false, networkMissing(p, netPlan.missing)
	}
	shell.NetworkNamespaced, shell.NetworkHeld, shell.Network = netPlan.namespaced, netPlan.held, netPlan.text
	return mounts, nil
}

// mountLayerWhy says why a session of p has no mount layer, "" where it
// has one; pr probes a user namespace.
func mountLayerWhy(pr *probes, p policy.Policy) string {
	if p.Mode == policy.DangerFullAccess {
		return "danger-full-access mode"
	}
	if ok, why := layout.MountLayer(); !ok {
		return why
	}
	if err := pr.userNamespace(); err != nil {
		return "not root, and a user namespace cannot mount here (" + err.Error() + ")"
	}
	return ""
}

// planMounts plans the mount layer of a session of p over roots.
func planMounts(opts Options, p policy.Policy, roots []sandbox.Root) *layout.MountPlan {
	// The roots' tree indexes are kept where the records are; without
	// that folder each root is read whole (a nil store).
	xdg, _ := opts.LookupEnv("XDG_RUNTIME_DIR")
	store, err := wire.IndexStore(xdg, sandbox.RootPaths(roots))
	if err != nil {
		store = nil
	}
	plan := layout.PlanMountsForSession(p, roots, store, gitguard.IndexWatch())
	return &plan
}

// close removes the session's record, and the upper folders of its
// caches' overlays: a record left behind could be named by a later
// session, and what the session wrote in its caches is discarded. Then
// it waits for a child whose session ended (childGone): exec returns
// only once the child is gone.
func (s *supervisor) close() {
	s.abortChild()
	s.release()
	if s.recordGone != nil {
		<-s.recordGone
	} else if s.dir != "" {
		s.removeRecord()
	}
	if s.childGone != nil {
		<-s.childGone
	}
	if s.signalsStopped != nil {
		<-s.signalsStopped
	}
}

// endRecord removes the session's record and placeholders
// (removeRecord) once after is closed, beside the rest of the end of a
// session whose every process ended: the git guard, which then checks
// what the session leaves, its placeholders gone or going (an empty
// folder or file either way), and whose walk skips a folder gone since
// it was listed. close waits for it.
func (s *supervisor) endRecord(after <-chan struct{}) {
	if s.dir == "" || s.recordGone != nil {
		return
	}
	gone := make(chan struct{})
	s.recordGone = gone
	go func() {
		defer close(gone)
		<-after
		s.removeRecord()
	}()
}

// removeRecord removes the session's folder, its record with it, and
// the placeholders the record names (wire.End).
func (s *supervisor) removeRecord() {
	var hs []layout.Placeholder
	if s.rec != nil && s.rec.Shell.Mounts != nil {
		hs = s.rec.Shell.Mounts.Placeholders
	}
	wire.End(s.dir, hs)
}

// forwardSignals forwards the signals of sigs to child until done is
// closed, and closes the channel it returns once it stops. A resize of
// the person's terminal resizes the session's instead, and the kernel
// tells CMD.
func (s *supervisor) forwardSignals(sigs <-chan os.Signal, l *launched, done <-chan struct{}) <-chan struct{} {
	forwarding := make(chan struct{})
	go func() {
		defer close(forwarding)
		for {
			select {
			case sig := <-sigs:
				if sig == syscall.SIGWINCH && s.relay != nil {
					s.relay.Resize()
					continue
				}
				l.signal(sig)
			case <-done:
				return
			}
		}
	}()
	return forwarding
}

// startDir is where CMD starts under p: the canonical workspace root
// (--cwd, else the folder exec was started from); in a nested session
// without a --cwd of its own, the shell's folder, which may lie beneath
// the root the outer session pinned.
func startDir(p policy.Policy) string {
	if p.Dir != "" {
		return p.Dir
	}
	return p.Cwd
}

// exitStatusOf is a process's exit status as a shell reports it: its own,
// or 128+N when signal N ended it.
func exitStatusOf(ps *os.ProcessState, err error) int {
	if ps == nil {
		return statusFailed
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// childEnv is CMD's environment: exec's own, without the DSH_FS_*
// settings (folded into the record already) and any session variables it
// inherited, plus the record and the channel.
func (s *supervisor) childEnv() []string {
	if s.nested {
		// The outer record stays the base; this exec's flags narrow it
		// as variables, and its own variables pass as they are.
		return append(os.Environ(), s.settings.NarrowingEnv()...)
	}
	env := WithoutSessionVars(os.Environ())
	env = append(env, goCacheProgEnv(s.self, env, s.rec.Shell.Caches, overlayMetacopy())...)
	return append(env, wire.Env+"="+s.record, fmt.Sprintf("%s=%d", wire.BrokerEnv, shellBrokerFD))
}
