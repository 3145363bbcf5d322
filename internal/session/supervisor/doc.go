// Package supervisor is dsh-fs exec's supervisor, the host's side of a
// session: everything of a session that
// is not flags (docs/design.md §10). Run resolves the session's layers
// (kernel, mounts, sockets, network, terminal, processes, caches, git),
// writes its record (NewRecord, the one place a record is made), starts
// the session's first process from a thread of its own, which sets those
// layers up and becomes CMD (internal/session/child; an ordinary user's
// mount layer that cannot be compiled into its system calls is set up by
// a child, child.Run), relays the terminal, forwards signals, and carries out the
// escalated calls the session sends over its broker channel.
//
// The shell re-runs its own binary for its helpers: the child, two
// probes, the brokered call and dsh-fs mcp's escalator. Entry is the one
// place that knows those hidden arguments, and selfCommand the one place
// that builds such a re-run; Main calls Entry before anything else.
//
// The seam to the front end: a brokered call needs the call's start
// (settings, fence, escalation) and the result's rendering, which are the
// front end's (internal/cli). The shell decodes the request and hands it
// to a Caller, two function values the front end supplies when it calls
// Entry: Run carries the request out and prints its result, Fail prints
// a failure and picks the exit status. So the shell imports neither cobra
// nor internal/cli (e2e/repo's TestFrontEndsLeanOnNoneOther checks it), and the front
// end's only call into a session is Run with an Options.
package supervisor
