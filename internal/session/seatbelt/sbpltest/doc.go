// Package sbpltest is the proof of the Seatbelt profiles without a Mac
// (docs/exec.md, macOS): an evaluator of exactly the subset of SBPL that
// internal/session/seatbelt writes (Compile, Profile.Decide), and the
// one table of (operation, path, expected) cases (Scenarios) that the
// evaluator runs on the profiles of its scenarios and that Linux's e2e
// tests run in real dsh-fs exec sessions; both must agree with the
// table on every case. It is for tests: no dsh-fs command imports it.
package sbpltest
