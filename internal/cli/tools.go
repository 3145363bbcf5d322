package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/dshfs/dsh-fs/docs"
)

// safety is what a harness needs to know before it lets a model call a
// command: whether it only reads, whether it can destroy content, and
// whether calls may run at the same time as others.
type safety struct {
	ReadOnly        bool `json:"read_only"`
	Destructive     bool `json:"destructive"`
	ConcurrencySafe bool `json:"concurrency_safe"`
}

// failSafe is assumed of any command not listed in knownSafety: writing,
// destructive, and not safe to run concurrently.
var failSafe = safety{ReadOnly: false, Destructive: true, ConcurrencySafe: false}

// knownSafety lists what is known of each command offered as a tool.
// write and edit replace content; they serialize on a lock, but two calls
// on one file still race for the last word, so they are not concurrency
// safe. mkdir destroys nothing (it never replaces); move and rm take a
// name away.
var knownSafety = sync.OnceValue(func() map[string]safety {
	return map[string]safety{
		"read":    {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"ls":      {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"grep":    {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"find":    {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"stat":    {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"policy":  {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"denials": {ReadOnly: true, Destructive: false, ConcurrencySafe: true},
		"write":   {ReadOnly: false, Destructive: true, ConcurrencySafe: false},
		"edit":    {ReadOnly: false, Destructive: true, ConcurrencySafe: false},
		"patch":   {ReadOnly: false, Destructive: true, ConcurrencySafe: false},
		"mkdir":   {ReadOnly: false, Destructive: false, ConcurrencySafe: false},
		"move":    {ReadOnly: false, Destructive: true, ConcurrencySafe: false},
		"rm":      {ReadOnly: false, Destructive: true, ConcurrencySafe: false},
	}
})

// toolCommands are the commands offered as tools, in this order.
var toolCommands = []string{"read", "write", "edit", "patch", "move", "mkdir", "rm", "ls", "grep", "find", "stat", "policy", "denials"}

func safetyOf(name string) safety {
	if s, ok := knownSafety()[name]; ok {
		return s
	}
	return failSafe
}

type tool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	ResultSchema json.RawMessage `json:"result_schema"`
	safety
}

type toolsResult struct {
	Tools []tool `json:"tools"`
	// FailureSchema is the schema of every command's failure, and Defs
	// the shared definitions the other schemas refer to (defs.json).
	FailureSchema json.RawMessage `json:"failure_schema"`
	Defs          json.RawMessage `json:"defs"`
}

// NewCmdTools returns the tools command. It needs no policy.
func NewCmdTools(app *invocation) *cobra.Command {
	return &cobra.Command{
		Use:   "tools",
		Short: "Print each command's input and result JSON Schema and safety properties, for a harness",
		Long: `tools prints, for a harness that offers dsh-fs's commands to a model as tools,
each command's input schema (arguments and flags), result schema, and safety
properties: read_only, destructive and concurrency_safe. A command not known
to be safe is reported as writing, destructive and not concurrency-safe.`,
		Example: "  dsh-fs tools | jq '.tools[] | {name, read_only}'",
		Args:    cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			app.beginStatic("tools")
			res, err := buildTools()
			if err != nil {
				return err
			}
			if app.text {
				return printToolsText(app.Stdout, res)
			}
			return app.printStatic(res)
		},
	}
}

func buildTools() (toolsResult, error) {
	var res toolsResult
	read := func(name string) (json.RawMessage, error) {
		b, err := docs.Schema.ReadFile("schema/" + name)
		if err != nil {
			return nil, fmt.Errorf("tools: missing schema %s: %w", name, err)
		}
		return json.RawMessage(b), nil
	}
	var err error
	if res.FailureSchema, err = read("failure.json"); err != nil {
		return res, err
	}
	if res.Defs, err = read("defs.json"); err != nil {
		return res, err
	}
	for _, name := range toolCommands {
		in, err := read("input-" + name + ".json")
		if err != nil {
			return res, err
		}
		out, err := read("result-" + name + ".json")
		if err != nil {
			return res, err
		}
		var meta struct {
			Description string `json:"description"`
		}
		if err := json.Unmarshal(in, &meta); err != nil {
			return res, fmt.Errorf("tools: schema input-%s.json: %w", name, err)
		}
		res.Tools = append(res.Tools, tool{Name: name, Description: meta.Description,
			InputSchema: in, ResultSchema: out, safety: safetyOf(name)})
	}
	return res, nil
}

// printToolsText prints one line per tool for people: its name, its
// safety in words, and the first sentence of its description. The
// schemas are for machines; --output json has them.
func printToolsText(w io.Writer, res toolsResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, t := range res.Tools {
		var props []string
		if t.ReadOnly {
			props = append(props, "read-only")
		} else {
			props = append(props, "writes")
		}
		if t.Destructive {
			props = append(props, "destructive")
		}
		if t.ConcurrencySafe {
			props = append(props, "concurrency-safe")
		}
		desc, _, _ := strings.Cut(t.Description, ". ")
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.Name, strings.Join(props, ", "), strings.TrimSuffix(desc, "."))
	}
	return tw.Flush()
}
