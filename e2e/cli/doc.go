// Package cli checks the command's results against the JSON Schemas of
// docs/schema (tests only). The txtar suite of the command line is the
// top level's testscripts/.
package cli
