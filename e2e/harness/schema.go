package harness

import (
	"bytes"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/docs"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schemas compiles every docs/schema/*.json from the embedded files,
// keyed by file name. Each file is added as a resource under its $id, so
// the relative "$ref": "defs.json#/…" resolve without a network or a disk.
func Schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	names, err := fs.Glob(docs.Schema, "schema/*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no embedded schemas: %v", err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	for _, name := range names {
		data, err := docs.Schema.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		base := path.Base(name)
		obj, _ := doc.(map[string]any)
		if id := obj["$id"]; id != SchemaBase+base {
			t.Errorf("%s: $id is %v, want %s", name, id, SchemaBase+base)
		}
		if s := obj["$schema"]; s != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema is %v, want draft 2020-12", name, s)
		}
		if err := c.AddResource(SchemaBase+base, doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, name := range names {
		base := path.Base(name)
		sch, err := c.Compile(SchemaBase + base)
		if err != nil {
			t.Errorf("%s does not compile: %v", base, err)
			continue
		}
		out[base] = sch
	}
	return out
}

// Validate checks line, one JSON document (a result line), against sch,
// the schema of the file name: not JSON fails the test, a mismatch is an
// error naming the schema.
func Validate(t *testing.T, sch *jsonschema.Schema, name, line string) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(line))
	if err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, line)
	}
	if err := sch.Validate(doc); err != nil {
		t.Errorf("does not match %s:\n%s\n%#v", name, line, err)
	}
}

// SchemaBase is the $id prefix of every schema in docs/schema.
const SchemaBase = "https://dsh-fs.dev/schema/"
