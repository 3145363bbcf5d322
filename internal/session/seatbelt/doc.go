// Package seatbelt turns a session's plan (internal/session/plan) into a
// macOS Seatbelt profile and the /usr/bin/sandbox-exec command that runs
// CMD under it (docs/exec.md, macOS). It reads the same plan the Linux
// enforcer applies and knows no policy: the writable folders and caches,
// what is read-only, hidden and pinned, the unix sockets and the network.
//
// Every path of a rule is a parameter (-DNAME=value, read in the profile
// as (param "NAME")), resolved to the real path the kernel matches (/tmp
// is /private/tmp on macOS; a rule written with the lexical spelling
// silently matches nothing). The exceptions are regexes (globs.go): a
// deny_read glob's, which holds the glob's literal folder prefix, and
// the protected paths' any-case rules, which hold their root, resolved
// the same way.
//
// Regex escaping: no regex of the profile holds a backslash: a special
// character is written as a class ([.]), which means the same whether
// the reader of #"…" passes a backslash through to the regex engine or
// takes it as a string escape. Codex's and Gemini CLI's profiles differ
// exactly there, and the wrong reading silently matches nothing. A glob
// with a character that cannot be written so (", ^, ]) gets no regex.
//
// A nested session (exec inside a session, under sandbox-exec already)
// never gets a second profile: sandbox_apply fails inside a sandbox
// (Operation not permitted). The supervisor finds the outer session's
// record and runs a nested supervisor (nestedSupervisor), which narrows
// the record and starts no child of its own, so Command is not called
// there. Where the record is not found (DSH_FS_SESSION unset inside the
// session), sandbox-exec itself refuses to apply a second profile and
// exec fails to start: closed, never a shell without a sandbox. Both
// paths have run on Linux only (the first; the second needs a Mac).
package seatbelt
