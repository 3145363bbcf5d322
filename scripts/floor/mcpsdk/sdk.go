//go:build !raw

package main

import (
	"context"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pathArgs struct {
	Path string `json:"path"`
}

type writeArgs struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

type editArgs struct {
	Path  string `json:"path"`
	Edits []struct {
		OldText string `json:"oldText"`
		NewText string `json:"newText"`
	} `json:"edits"`
}

// answer is every tool's result: one text line, no structured content.
func answer[In any](context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
}

func serve() {
	srv := mcp.NewServer(&mcp.Implementation{Name: "floor", Version: "0"}, nil)
	for _, name := range []string{"read_text_file", "get_file_info"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name}, answer[pathArgs])
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "write_file"}, answer[writeArgs])
	mcp.AddTool(srv, &mcp.Tool{Name: "edit_file"}, answer[editArgs])
	if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Fatal(err)
	}
}
