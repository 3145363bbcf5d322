// Package mcp holds the process tests of dsh-fs mcp over stdio (tests
// only), driven by the official Go SDK's client (harness.MCPStart) or by
// raw JSON-RPC lines (mcp_roots_test.go): the tools and their schemas
// against the official server's, recorded clients (testdata/mcp), roots,
// escalation by elicitation, moves, patches, confined reads, and the
// release binaries' hand-over from dsh-fs to dsh-fs-mcp.
//
// Two MCP tests live elsewhere, with what they share: the MCP path table
// in e2e/files beside the CLI's, and the swap and read races in e2e/race
// beside the attacker they run.
package mcp
