// Command mcpsdk is the warm-latency floor of an MCP server built on the
// official Go SDK, for scripts/bench.sh: the tools mcpbench calls, each
// typed through mcp.AddTool like dsh-fs mcp's, each answering one fixed
// line without touching a file. What it takes per call is what the SDK's
// stdio plumbing takes before any file work. Built with -tags raw it is
// the floor below that: no SDK, each request line answered with a canned
// result, so only the pipe round trip and one JSON decode remain. It is
// measured, never shipped.
package main

func main() { serve() }
