// Package pathmatch matches canonical paths against the policy's globs and
// git's rules: the deny_read and protected globs (a folder named covers
// what lies beneath it), whole-component containment, and what makes a
// folder a git directory. The fence and the exec session's mount planner
// both match through it, so a path is denied or hidden by the same rule.
package pathmatch
