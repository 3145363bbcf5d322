// Package cli holds the testscripts (testscripts/*.txtar, run by
// TestScripts: one behaviour of the command line per file) and the checks
// of the command's results against the JSON Schemas of docs/schema
// (tests only). .ci/run runs TestScripts of this package again against
// a CGO_ENABLED=0 build.
package cli
