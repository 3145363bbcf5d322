// Package patch holds the process tests of dsh-fs patch (tests only): a
// patch killed between its renames, the same patch applied again after a
// kill (never twice), and the replay of real commits of this repository
// (testdata/patch-replay, written by scripts/patch-fixtures.sh).
//
// The patch under a swap race and out of space is in e2e/race, with the
// attacker and the small tmpfs; exec's and MCP's patch tests are with
// their front ends.
package patch
