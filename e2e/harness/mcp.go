package harness

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPLayout is a workspace (the allowed folder) and a folder outside it,
// both canonical.
func MCPLayout(t *testing.T) (ws, outside string) {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, outside = filepath.Join(root, "ws"), filepath.Join(root, "outside")
	WriteTree(t, ws, map[string]string{
		"a.txt":          "one\ntwo\nthree\nfour\nfive\n",
		"dup.txt":        "x = 1\nx = 1\n",
		"crlf.txt":       "\ufeffalpha\r\nbeta\r\n",
		"src/main.go":    "package main\n",
		"src/util/u.go":  "package util\n",
		"node_modules/m": "m\n",
		"img.png":        "\x89PNG\r\n\x1a\n",
		".hidden":        "h\n",
	})
	WriteTree(t, outside, map[string]string{"keep.txt": "keep\n"})
	return ws, outside
}

// MCPStart starts dsh-fs mcp ARGS in ws and connects the SDK's client to
// it. The child's environment is Env's without DSH_FS_CWD: the DIR
// arguments name the workspace.
func MCPStart(t *testing.T, ws string, args ...string) *mcp.ClientSession {
	t.Helper()
	return MCPStartSystem(t, ws, "", args...)
}

// MCPStartSystem is MCPStart with a trusted system config file.
func MCPStartSystem(t *testing.T, ws, system string, args ...string) *mcp.ClientSession {
	t.Helper()
	env := MCPEnv(t, ws)
	if system != "" {
		WriteSystemConfig(t, env, system)
	}
	c := exec.Command(Bin(t), append([]string{"mcp"}, args...)...)
	c.Env, c.Dir, c.Stderr = env, ws, os.Stderr
	return MCPConnect(t, c, nil)
}

// MCPEnv is Env's environment without DSH_FS_CWD: the DIR arguments
// name the workspace.
func MCPEnv(t *testing.T, ws string) []string {
	t.Helper()
	var env []string
	for _, kv := range Env(t, ws) {
		if !strings.HasPrefix(kv, "DSH_FS_CWD=") {
			env = append(env, kv)
		}
	}
	return env
}

// MCPConnect starts c, a dsh-fs mcp (or a command that runs one), and
// connects the SDK's client with opts to it.
func MCPConnect(t *testing.T, c *exec.Cmd, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	s, err := mcp.NewClient(&mcp.Implementation{Name: "dsh-fs-test", Version: "0"}, opts).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect to dsh-fs mcp: %v", err)
	}
	t.Cleanup(func() { s.Close(); cancel() })
	return s
}

// MCPCall calls a tool and returns its result; a protocol error fails
// the test.
func MCPCall(t *testing.T, s *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

// MCPText is the text content of a tool result, its parts joined.
func MCPText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// MCPTools lists the server's tools by name; an error fails the test.
func MCPTools(t *testing.T, s *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return tools
}
