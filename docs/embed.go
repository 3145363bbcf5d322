// Package docs holds dsh-fs's machine-readable documentation: the JSON Schemas of every command's input and result.
package docs

import "embed"

// Schema holds the JSON Schemas (draft 2020-12) under schema/: defs.json
// with the shared definitions, result-<command>.json for each command's
// success result, failure.json for every failure, and input-<command>.json
// for a harness that offers the commands to a model as tools. Each schema's
// $id is https://dsh-fs.dev/schema/<file name>, and its $refs are relative
// to it, so a validator resolves them from these files alone.
//
//go:embed schema/*.json
var Schema embed.FS
