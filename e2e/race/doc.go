// Package race holds the tests that race, kill or starve the real binary
// (tests only): the symlink-swap race against an attacker process
// (TestRaceAttacker, re-executed from this test binary), the read race,
// through the CLI and through MCP, the exchange races (exchange-loop,
// registered by this package's TestMain), concurrent edits and writes,
// kill -9 during a write, a full tmpfs (ENOSPC), durability, the bare
// repository's completion race, and dsh-fs patch under a swap race and
// out of space (patch_race_test.go).
//
// They are one package because they share the attacker, its layout and
// the tree snapshots, and because the attacker is a Test function of the
// same test binary.
package race
