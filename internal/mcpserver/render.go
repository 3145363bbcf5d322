package mcpserver

import (
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dshfs/dsh-fs/internal/fserr"
	"github.com/dshfs/dsh-fs/internal/result"
	"github.com/dshfs/dsh-fs/internal/sandbox"
)

// Rendering of the tools' results. Every form is internal/result's: this
// file only puts it in the MCP result (text, structured content, isError).

// failureOf is err's failure result for the call h: the one a call run
// elsewhere gave back, as it gave it, or err rendered here.
func failureOf(h result.Header, err error) result.Failure {
	var ff *forwardedFailure
	if errors.As(err, &ff) {
		return ff.f
	}
	return result.NewFailure(h, err)
}

// toolError is the error of a failed drop-in call, whose text is
// result.ToolText: the SDK returns it as a tool error (isError), which
// the model sees.
func toolError(err error) error {
	return errors.New(result.ToolText(failureOf(result.Header{}, err)))
}

// text is the success of a drop-in tool.
func text(s string) (*mcp.CallToolResult, textResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}, textResult{Content: s}, nil
}

func fail(err error) (*mcp.CallToolResult, textResult, error) {
	return nil, textResult{}, toolError(err)
}

// dshResult is a dsh tool's result: the CLI's JSON object, as text and as
// structured content; a failure is a tool error whose structured content
// is the CLI's failure object (the denial with its marker included).
func (m *server) dshResult(op, path string, f *sandbox.Fence, t sandbox.Target, res any, err error) (*mcp.CallToolResult, any, error) {
	h := result.Header{Op: op, Path: path, Resolved: t.Path, Mode: string(m.settings.Policy.Mode)}
	if f != nil {
		h.Mode = string(f.Mode())
	}
	if err != nil {
		fl := result.NewFailure(h, err)
		raw, jerr := json.Marshal(fl)
		if jerr != nil {
			return nil, nil, jerr
		}
		return dshFailure(fl, raw)
	}
	h.OK = true
	raw, jerr := result.JSON(h, res)
	if jerr != nil {
		return nil, nil, jerr
	}
	return nil, raw, nil
}

// dshFailure is a dsh tool's failure fl, raw its JSON: the tool error's
// text, then the object, which is the structured content too.
func dshFailure(fl result.Failure, raw json.RawMessage) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: result.ToolText(fl) + "\n" + string(raw)}}}, raw, nil
}

// dshMutated is a dsh tool's result for the mutation o of path (mutate),
// as dshResult renders it; but a call run elsewhere gives its result
// line as the structured content as it is, a failure line too (as a tool
// error), and the question for the client's user is the result.
func (m *server) dshMutated(path string, o mutated) (*mcp.CallToolResult, any, error) {
	var ff *forwardedFailure
	switch {
	case o.ask != nil:
		return o.ask, nil, nil
	case errors.As(o.err, &ff):
		return dshFailure(ff.f, ff.raw)
	case o.err != nil || !o.handedOver:
		return m.dshResult(o.op, path, o.x.Fence(), o.t, o.res, o.err)
	}
	return nil, o.line, nil
}

// forwardedFailure is the failure result of a call run elsewhere.
type forwardedFailure struct {
	f   result.Failure
	raw json.RawMessage
}

func (e *forwardedFailure) Error() string    { return e.f.Error.Message }
func (e *forwardedFailure) Code() fserr.Code { return e.f.Error.Code }
