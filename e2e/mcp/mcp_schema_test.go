package mcp

// The tools' input schemas and annotations against the official
// filesystem server's (issue 25), recorded from its tools/list in
// testdata/mcp/official/tools.json. A client built against the official
// server must find the same arguments typed the same way, must be able
// to add an argument the official server would ignore, and must read the
// same hints.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// officialTool is one tool of the recording, its schema as plain JSON.
type officialTool struct {
	Name        string          `json:"name"`
	InputSchema map[string]any  `json:"inputSchema"`
	Annotations map[string]bool `json:"annotations"`
}

func officialTools(t *testing.T) map[string]officialTool {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "mcp", "official", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Tools []officialTool `json:"tools"`
	}
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	tools := map[string]officialTool{}
	for _, tool := range rec.Tools {
		tools[tool.Name] = tool
	}
	return tools
}

// ourSchemas is every tool's input schema and annotations as a client
// sees them, plain JSON.
func ourSchemas(t *testing.T, s *mcp.ClientSession) map[string]officialTool {
	t.Helper()
	tools := map[string]officialTool{}
	for name, tool := range harness.MCPTools(t, s) {
		raw, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var ours officialTool
		if err := json.Unmarshal(raw, &ours); err != nil {
			t.Fatal(err)
		}
		tools[name] = ours
	}
	return tools
}

// walkSchema calls visit on every schema beneath s, with its place.
func walkSchema(place string, s any, visit func(place string, s map[string]any)) {
	m, ok := s.(map[string]any)
	if !ok {
		return
	}
	visit(place, m)
	if props, ok := m["properties"].(map[string]any); ok {
		for k, v := range props {
			walkSchema(place+"."+k, v, visit)
		}
	}
	for _, k := range []string{"items", "additionalProperties", "not"} {
		walkSchema(place+"/"+k, m[k], visit)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		if list, ok := m[k].([]any); ok {
			for i, v := range list {
				walkSchema(fmt.Sprintf("%s/%s[%d]", place, k, i), v, visit)
			}
		}
	}
}

// TestMcpSchemasOneTypeOpen walks every tool's input schema: each schema
// has one type (an optional field is simply not required), and none
// refuses properties it does not name. Before issue 25, head and tail
// were ["null","integer"], the arrays ["null","array"], and every object
// had additionalProperties: false.
func TestMcpSchemasOneTypeOpen(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	for name, tool := range ourSchemas(t, harness.MCPStart(t, ws, ws)) {
		walkSchema(name, tool.InputSchema, func(place string, s map[string]any) {
			if _, ok := s["type"].([]any); ok {
				t.Errorf("%s: a list of types %v", place, s["type"])
			}
			if ap, ok := s["additionalProperties"]; ok && (ap == false || fmt.Sprint(ap) == "map[not:map[]]") {
				t.Errorf("%s: additionalProperties %v refuses an argument the official server ignores", place, ap)
			}
		})
	}
}

// TestMcpSchemasAsOfficial compares each official tool's input schema with
// the official server's, property by property: the same names, types,
// required lists, enums and defaults, but for the deliberate differences
// listed here.
func TestMcpSchemasAsOfficial(t *testing.T) {
	// Deliberate differences, by tool.property.field (field "" for the
	// property itself): why each is so.
	deliberate := map[string]string{
		"read_text_file.head.type":  "integer: a line count is an integer (the official server says number and takes 1.5)",
		"read_text_file.tail.type":  "integer, as head",
		"read_file.head.type":       "integer, as read_text_file's",
		"read_file.tail.type":       "integer, as read_text_file's",
		"write_file.escalate":       "dsh-fs's escalation (docs/design.md §7): asks for a mode for one call",
		"edit_file.escalate":        "as write_file's",
		"create_directory.escalate": "as write_file's; always refused, said so",
		"move_file.escalate":        "as create_directory's",
	}
	official := officialTools(t)
	ws, _ := harness.MCPLayout(t)
	ours := ourSchemas(t, harness.MCPStart(t, ws, ws))
	used := map[string]bool{}
	differs := func(key, what string) {
		t.Helper()
		if _, ok := deliberate[key]; ok {
			used[key] = true
			return
		}
		t.Errorf("%s: %s", key, what)
	}
	names := make([]string, 0, len(official))
	for name := range official {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want, got := official[name].InputSchema, ours[name].InputSchema
		if got == nil {
			t.Errorf("%s: not listed", name)
			continue
		}
		compareSchema(name, want, got, differs)
	}
	for key := range deliberate {
		if !used[key] {
			t.Errorf("deliberate difference %s is no difference: drop it", key)
		}
	}
}

// compareSchema compares the object schemas want (official) and got
// (ours) at place, and their properties', recursively.
func compareSchema(place string, want, got map[string]any, differs func(key, what string)) {
	for _, field := range []string{"type", "enum", "default", "minItems"} {
		if fmt.Sprint(want[field]) != fmt.Sprint(got[field]) {
			differs(place+"."+field, fmt.Sprintf("%s %v, official %v", field, got[field], want[field]))
		}
	}
	if w, g := strings.Join(sortedStrings(want["required"]), ","), strings.Join(sortedStrings(got["required"]), ","); w != g {
		differs(place+".required", fmt.Sprintf("required [%s], official [%s]", g, w))
	}
	wantProps, _ := want["properties"].(map[string]any)
	gotProps, _ := got["properties"].(map[string]any)
	for k, w := range wantProps {
		g, ok := gotProps[k].(map[string]any)
		if !ok {
			differs(place+"."+k, "missing")
			continue
		}
		compareSchema(place+"."+k, w.(map[string]any), g, differs)
	}
	for k := range gotProps {
		if _, ok := wantProps[k]; !ok {
			differs(place+"."+k, "not in the official schema")
		}
	}
	if w, ok := want["items"].(map[string]any); ok {
		g, _ := got["items"].(map[string]any)
		compareSchema(place+"[]", w, g, differs)
	}
}

func sortedStrings(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, s := range list {
		out = append(out, fmt.Sprint(s))
	}
	slices.Sort(out)
	return out
}

// effectiveHints are a tool's annotations with the spec's defaults
// filled in: readOnly false, destructive true, idempotent false,
// openWorld true.
func effectiveHints(a map[string]bool) map[string]bool {
	h := map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}
	for k, v := range a {
		h[k] = v
	}
	if h["readOnlyHint"] {
		// destructive and idempotent mean nothing for a tool that reads.
		delete(h, "destructiveHint")
		delete(h, "idempotentHint")
	}
	return h
}

// TestMcpAnnotationsAsOfficial: each official tool's hints, defaults
// filled in, are the official server's; the dsh tools follow the same
// rules: openWorldHint false everywhere (the tools touch only the
// allowed folders), readOnlyHint on the tools that read, and a tool that
// replaces content destructive. Before issue 25 no tool said
// openWorldHint (the default is true) and move_file said destructiveHint
// false.
func TestMcpAnnotationsAsOfficial(t *testing.T) {
	official := officialTools(t)
	ws, _ := harness.MCPLayout(t)
	ours := ourSchemas(t, harness.MCPStart(t, ws, ws))
	for name, o := range official {
		want, got := effectiveHints(o.Annotations), effectiveHints(ours[name].Annotations)
		if fmt.Sprint(want) != fmt.Sprint(got) {
			t.Errorf("%s: hints %v, official %v", name, got, want)
		}
	}
	dsh := map[string]map[string]bool{
		"dsh_read":   {"readOnlyHint": true, "openWorldHint": false},
		"dsh_ls":     {"readOnlyHint": true, "openWorldHint": false},
		"dsh_stat":   {"readOnlyHint": true, "openWorldHint": false},
		"dsh_policy": {"readOnlyHint": true, "openWorldHint": false},
		"dsh_write":  {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false},
		"dsh_edit":   {"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false},
	}
	for name, want := range dsh {
		if got := effectiveHints(ours[name].Annotations); fmt.Sprint(effectiveHints(want)) != fmt.Sprint(got) {
			t.Errorf("%s: hints %v, want %v", name, got, effectiveHints(want))
		}
	}
	// Every tool, a new one included, says it stays in its world.
	for name, tool := range ours {
		if v, ok := tool.Annotations["openWorldHint"]; !ok || v {
			t.Errorf("%s: openWorldHint %v (set %v), want false", name, v, ok)
		}
	}
}

// TestMcpUnknownArguments: an argument a model adds, at the top level or
// inside an edit, is ignored, as the official server ignores it; the
// arguments that are there are still checked. Before issue 25 each was
// an error ("unexpected additional properties").
func TestMcpUnknownArguments(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	s := harness.MCPStart(t, ws, "--tmp=false", ws)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_text_file", map[string]any{"path": "a.txt", "encoding": "utf-8"}, "one\n"},
		{"edit_file", map[string]any{"path": filepath.Join(ws, "a.txt"), "edits": []map[string]any{{"oldText": "two", "newText": "2", "replaceAll": true}}}, "+2"},
		{"dsh_edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"old": "three", "new": "3", "why": "x"}}, "note": 1}, `"ok":true`},
		{"list_allowed_directories", map[string]any{"verbose": true}, "Allowed directories:"},
		{"search_files", map[string]any{"path": ws, "pattern": "*.go", "caseSensitive": false}, "main.go"},
	} {
		res := harness.MCPCall(t, s, c.tool, c.args)
		text := harness.MCPText(res)
		if res.IsError || !strings.Contains(text, c.want) {
			t.Errorf("%s with an extra argument: isError %v:\n%s", c.tool, res.IsError, text)
		}
	}
	// What is there is still validated.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"read_text_file", map[string]any{"path": "a.txt", "head": "2"}},
		{"read_text_file", map[string]any{"path": "a.txt", "head": 1.5}},
		{"read_text_file", map[string]any{"head": 1}},
		{"edit_file", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "one"}}}},
		{"directory_tree", map[string]any{"path": ".", "excludePatterns": "x"}},
	} {
		ctx, cancel := mcpCtx()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		cancel()
		if err == nil && !res.IsError {
			t.Errorf("%s %v: accepted: %s", c.tool, c.args, harness.MCPText(res))
		}
	}
	if got := harness.ReadFile(t, filepath.Join(ws, "a.txt")); got != "one\n2\n3\nfour\nfive\n" {
		t.Errorf("a.txt = %q", got)
	}
}

func mcpCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), harness.Timeout)
}
