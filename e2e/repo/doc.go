// Package repo holds the checks of the repository itself rather than of
// the binary (tests only): ARCHITECTURE.md names every package folder and
// only names that exist, the README is the way in and the docs' links
// resolve, no source mutates by path outside sandbox.Dir (the audit),
// and no production file or function outgrows its budget (TestSizes).
// They read files under harness.RepoRoot and run no dsh-fs, so
// this package has no TestMain: a new repository-level check (the
// dependencies, the binary's size, the shell's dependencies) goes here.
package repo
