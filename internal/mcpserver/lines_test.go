package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// checkMessage accepts no line the SDK's decoder refuses: that line would
// end the session. The seeds are the shapes that differ; the fuzzer
// looks for more (go test -fuzz FuzzCheckMessage ./mcpserver).
func FuzzCheckMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"a","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1.5}}`,
		`{"jsonrpc":"2.0","id":1,"error":null}`,
		`{"jsonrpc":"2.0","id":1}`,
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":true,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
		`{"jsonrpc":"2.0","method":null}`,
		`{"jsonrpc":"2.0","method":5}`,
		`{"JSONRPC":"2.0","id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","ID":1,"method":"x"}`,
		`{"jsonrpc":"2\u002e0","id":1,"method":"x"}`,
		`{"jsonrpc":2.0,"id":1,"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","id":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":"\"{["}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`,
		`null`, `42`, `"x"`, `[]`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if !json.Valid([]byte(line)) || strings.HasPrefix(strings.TrimSpace(line), "[") {
			return // answered before checkMessage, or a batch
		}
		if checkMessage([]byte(line)) != nil {
			return
		}
		if _, err := jsonrpc.DecodeMessage([]byte(line)); err != nil {
			t.Errorf("checkMessage accepts %.200q, which the SDK refuses: %v", line, err)
		}
	})
}
