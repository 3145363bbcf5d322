// Package policy is the sandbox policy in words: the modes, the settings
// and their parsers, Policy itself, the denial and its reasons, and what
// an approver is asked. It makes no system call and opens no file: the
// fence that enforces a policy lives in internal/sandbox, and what only
// needs to name or parse a policy or a denial imports this package alone.
package policy
