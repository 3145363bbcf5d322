// Package testns runs a test binary where the machine's session state
// cannot reach it, nor it the machine's: as root on Linux, in a mount
// namespace of its own with an empty tmpfs over each folder it is given
// (the runtime folder of the session records, wire.RuntimeBase). A test
// session then neither reads what the machine's sessions kept (the
// probes' verdicts, the toolchains' answers, the tree indexes, the
// records) nor leaves its own there, where every later dsh-fs exec of
// the machine would read them. Only test binaries import it.
package testns
