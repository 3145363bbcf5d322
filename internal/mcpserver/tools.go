package mcpserver

import (
	"encoding/json"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every tool is registered through addTool, so that each, a new one
// included, is shaped as a client built for the official filesystem
// server expects (docs/design.md §5):
//
//   - an argument the schema does not name is ignored, at the top and in
//     nested objects, as the official server ignores it: a model adds
//     one (`encoding`, a `replaceAll` in an edit) and the call must not
//     fail for it. The Go SDK infers additionalProperties: false.
//   - each property has one type; an optional one is simply not
//     required. The SDK infers ["null", T] for a pointer or a slice,
//     which clients with single-type schema formats (Gemini's function
//     declarations) refuse and the MCP Inspector's --strict warns about.
//   - the annotations say openWorldHint: false (the spec's default is
//     true): every tool touches only the allowed folders.
//
// What is named is still validated against its type.

// addTool registers t with handler h on srv, its input schema (In's
// unless t has one) and its annotations shaped as above.
func addTool[In, Out any](srv *mcp.Server, t *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) {
	tool := *t
	if tool.InputSchema == nil {
		tool.InputSchema = inputSchema[In](nil)
	} else if s, ok := tool.InputSchema.(*jsonschema.Schema); ok {
		openSchema(s)
	}
	if tool.OutputSchema == nil && reflect.TypeFor[Out]() != reflect.TypeFor[any]() {
		tool.OutputSchema = inputSchema[Out](nil)
	}
	var a mcp.ToolAnnotations
	if t.Annotations != nil {
		a = *t.Annotations
	}
	if a.OpenWorldHint == nil {
		a.OpenWorldHint = ptr(false)
	}
	tool.Annotations = &a
	mcp.AddTool(srv, &tool, h)
}

// inputSchema is T's schema, opened (openSchema), with each property
// named in props changed by its function: an enum, a default or a bound
// the struct tags cannot say.
func inputSchema[T any](props map[string]func(*jsonschema.Schema)) *jsonschema.Schema {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic("mcp: schema of " + reflect.TypeFor[T]().String() + ": " + err.Error())
	}
	openSchema(s)
	for name, change := range props {
		p, ok := s.Properties[name]
		if !ok {
			panic("mcp: schema of " + reflect.TypeFor[T]().String() + " has no property " + name)
		}
		change(p)
	}
	return s
}

// openSchema drops additionalProperties: false and reduces ["null", T]
// to T, in s and every schema beneath it.
func openSchema(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && (s.Types[0] == "null" || s.Types[1] == "null") {
		s.Type = s.Types[0]
		if s.Type == "null" {
			s.Type = s.Types[1]
		}
		s.Types = nil
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Not != nil && reflect.ValueOf(*ap.Not).IsZero() {
		s.AdditionalProperties = nil
	}
	for _, p := range s.Properties {
		openSchema(p)
	}
	for _, d := range s.Defs {
		openSchema(d)
	}
	openSchema(s.Items)
	openSchema(s.AdditionalProperties)
	for _, list := range [][]*jsonschema.Schema{s.PrefixItems, s.AnyOf, s.OneOf, s.AllOf} {
		for _, sub := range list {
			openSchema(sub)
		}
	}
}

// withDefault sets a property's default, as the official server
// declares it.
func withDefault(raw string) func(*jsonschema.Schema) {
	return func(p *jsonschema.Schema) { p.Default = json.RawMessage(raw) }
}

// withMinItems bounds an array property from below.
func withMinItems(n int) func(*jsonschema.Schema) {
	return func(p *jsonschema.Schema) { p.MinItems = ptr(n) }
}

// withEnum restricts a property to values.
func withEnum(values ...any) func(*jsonschema.Schema) {
	return func(p *jsonschema.Schema) { p.Enum = values }
}
