// Package kernel is the kernel's own mechanisms that dsh-fs restricts
// itself and an exec session with: Landlock's ABI and rulesets, seccomp
// filters and the assembler that builds them, dropping privileges, and
// the loopback of a new network namespace. It holds no policy: what to
// leave writable, and when, is internal/sandbox's and internal/shell's to
// say; each function here does one thing to this process, for good.
package kernel
