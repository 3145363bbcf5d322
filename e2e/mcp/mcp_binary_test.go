package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dshfs/dsh-fs/e2e/harness"
	"github.com/dshfs/dsh-fs/internal/cli"
)

// mcpSDK is the MCP SDK's module path.
const mcpSDK = "github.com/modelcontextprotocol/go-sdk"

// TestCLILinksNoMCPSDK (issue 15): dsh-fs, the binary every CLI call
// starts, does not link the MCP SDK; dsh-fs-mcp, which dsh-fs mcp runs,
// does. With the SDK linked in, `dsh-fs stat` took 4.15 ms against
// 3.26 ms without it (docs/design.md §5). The second half is the control:
// were the server linked nowhere, the first could not fail.
func TestCLILinksNoMCPSDK(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to list what each binary links")
	}
	links := func(pkg string) []string {
		t.Helper()
		c := exec.Command(goBin, "list", "-deps", "-f", "{{.ImportPath}}", pkg)
		out, err := c.Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		var sdk []string
		for _, p := range strings.Fields(string(out)) {
			if strings.HasPrefix(p, mcpSDK) {
				sdk = append(sdk, p)
			}
		}
		return sdk
	}
	if sdk := links(harness.RepoRoot); len(sdk) > 0 {
		t.Errorf("dsh-fs links the MCP SDK (%s): keep the server in package mcpserver, which only dsh-fs-mcp imports", strings.Join(sdk, ", "))
	}
	if sdk := links(filepath.Join(harness.RepoRoot, "cmd", cli.MCPBinary)); len(sdk) == 0 {
		t.Errorf("%s links no MCP SDK package", cli.MCPBinary)
	}
}

// TestMcpServerBinaryMissing (issue 15): dsh-fs installed without
// dsh-fs-mcp beside it fails dsh-fs mcp with FS_NOT_FOUND, exit 1, and a
// hint that says how to install it; it serves nothing.
func TestMcpServerBinaryMissing(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin", "dsh-fs")
	harness.CopyExecutable(t, harness.Bin(t), bin)
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	// "mcp" first hands over before the command tree is built; a flag
	// before it, from the command's run.
	for _, args := range [][]string{{"mcp", ws}, {"--tmp=false", "mcp", ws}} {
		c := exec.Command(bin, args...)
		c.Env = harness.Env(t, ws)
		code, res, out, _ := harness.Run(t, c, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`+"\n"))
		if code != cli.ExitFailed || res.OK || res.Op != "mcp" || res.Error.Code != "FS_NOT_FOUND" {
			t.Fatalf("%v: exit %d, want %d and FS_NOT_FOUND:\n%s", args, code, cli.ExitFailed, out)
		}
		want := filepath.Join(dir, "bin", cli.MCPBinary)
		if !strings.Contains(res.Error.Message, want) || !strings.Contains(out, "go install . ./cmd/"+cli.MCPBinary) {
			t.Errorf("%v: the failure should name %s and how to install it:\n%s", args, want, out)
		}
	}
}

// TestMcpFlagsBeforeCommand (issue 15): a policy flag before "mcp" is
// the server's too, after the hand-over from the command's run.
func TestMcpFlagsBeforeCommand(t *testing.T) {
	ws, _ := harness.MCPLayout(t)
	c := exec.Command(harness.Bin(t), "--mode", "read-only", "mcp", ws)
	c.Dir, c.Env = ws, harness.MCPEnv(t, ws)
	s := harness.MCPConnect(t, c, nil)
	if tools := harness.MCPTools(t, s); tools["write_file"] != nil || tools["read_text_file"] == nil {
		t.Errorf("--mode read-only before mcp: write_file registered %v, read_text_file %v", tools["write_file"] != nil, tools["read_text_file"] != nil)
	}
}

// TestReleaseBinariesHandOver (issue 15): the binaries as README's
// Install builds them, not this test binary standing in for both: dsh-fs
// mcp hands over to the dsh-fs-mcp beside it, which serves. A dsh-fs-mcp
// built without its server would hand over to itself for ever.
func TestReleaseBinariesHandOver(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command to build the release binaries")
	}
	dir := t.TempDir()
	build := exec.Command(goBin, "build", "-o", dir+string(filepath.Separator), harness.RepoRoot, filepath.Join(harness.RepoRoot, "cmd", cli.MCPBinary))
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ws, _ := harness.MCPLayout(t)
	c := exec.Command(filepath.Join(dir, "dsh-fs"), "mcp", "--tmp=false", ws)
	c.Dir, c.Env = ws, harness.MCPEnv(t, ws)
	s := harness.MCPConnect(t, c, nil)
	if got := harness.MCPText(harness.MCPCall(t, s, "list_allowed_directories", map[string]any{})); got != "Allowed directories:\n"+ws {
		t.Errorf("list_allowed_directories = %q", got)
	}
	if res := harness.MCPCall(t, s, "read_text_file", map[string]any{"path": "a.txt"}); res.IsError || !strings.HasPrefix(harness.MCPText(res), "one\n") {
		t.Errorf("read_text_file: %s", harness.MCPText(res))
	}
}
