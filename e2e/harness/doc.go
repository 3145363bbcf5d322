// Package harness is what every process test under e2e needs to run the
// real dsh-fs: it is a regular package, imported only by the test
// packages beside it (e2e/exec, e2e/mcp, e2e/race, e2e/patch, e2e/files,
// e2e/cli) and by the txtar suite of the top level's testscripts/.
//
// The binaries: Main, the TestMain of each test package, makes that test
// binary double as dsh-fs, dsh-fs-mcp and the helper programs of the
// testscripts and tests (fake-approver, landlock-probe, seccomp-errno and
// the package's own), put on $PATH by testscript. Nothing is built: each
// package's test binary links the command once, race-instrumented under
// -race, and Bin finds it. The trusted locations are the test binary's
// own (DSH_FS_TEST_SYSTEM_DIR, DSH_FS_TEST_HOME), so the machine's
// /etc/dsh-fs and the real home play no part.
//
// Running them: Env is a child's whole environment (a workspace, a temp
// home, empty trusted folders; WriteSystemConfig puts a trusted file
// there), Cmd one invocation, Run runs it under Timeout and decodes its
// Result. MCPStart, MCPConnect, MCPCall, MCPText and MCPTools drive dsh-fs
// mcp with the official SDK's client; MCPLayout and MCPEnv are its
// workspace and environment.
//
// Files and skips: WriteTree, ReadFile, DirNames, SHA256Hex, FileSHA256
// and CanonicalTemp lay out and inspect trees; RequireLandlock skips
// where the kernel has no Landlock; Nobody, CopyExecutable and
// UnprivilegedBin run dsh-fs as an ordinary user; Schemas and Validate
// check a result line against docs/schema. RepoRoot is the repository,
// for the tests that read its sources.
//
// A helper that one subject alone uses stays in that subject's package,
// unexported: the race attacker in e2e/race, the session's user and
// terminal in e2e/exec, the raw JSON-RPC client in e2e/mcp.
package harness
