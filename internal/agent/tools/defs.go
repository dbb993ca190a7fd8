package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/llm"
)

// Tool names of the contract (section 8).
const (
	ListFiles  = "list_files"
	ReadFile   = "read_file"
	Search     = "search"
	EditFile   = "edit_file"
	WriteFile  = "write_file"
	DeleteFile = "delete_file"
	RunTests   = "run_tests"
	Finish     = "finish"
)

// definitions of every tool but finish (whose parameters are the role's
// answer).
var definitions = map[string]llm.Tool{
	ListFiles: {Name: ListFiles, Description: "List the repository's tracked files (capped, with a count of the rest).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a folder to list, relative to the repository root; empty for all"},"pattern":{"type":"string","description":"a glob matched against the path, or the file name when it has no '/', e.g. *.go"}},"additionalProperties":false}`)},
	ReadFile: {Name: ReadFile, Description: "Read a tracked file as numbered lines. For codegen the file is shown as edited so far.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer","description":"first line, 1-based"},"limit":{"type":"integer","description":"number of lines (default 2000)"}},"required":["path"],"additionalProperties":false}`)},
	Search: {Name: Search, Description: "Search the tracked files for a regular expression; answers path:line:text lines (capped).",
		Parameters: json.RawMessage(`{"type":"object","properties":{"pattern":{"type":"string","description":"a regular expression"},"path":{"type":"string","description":"a folder or file to search in"},"glob":{"type":"string","description":"only files whose path or name matches this glob"}},"required":["pattern"],"additionalProperties":false}`)},
	EditFile: {Name: EditFile, Description: "Replace old_string with new_string in a file of the file plan. old_string must match exactly once (whitespace included) unless replace_all is true.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old_string","new_string"],"additionalProperties":false}`)},
	WriteFile: {Name: WriteFile, Description: "Create a file of the file plan, or replace its whole content. Prefer edit_file to change part of an existing file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`)},
	DeleteFile: {Name: DeleteFile, Description: "Delete a file the file plan marks with intent delete.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)},
	RunTests: {Name: RunTests, Description: "Run the project's test suites (sandboxed, like `orch test`) on your edits so far; answers the summary and the failing tests' output. Limited per run.",
		Parameters: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)},
}

// Definitions returns the tools this workspace offers, in the contract's
// order, finish excluded: the read-only tools, and for a writable
// workspace the write tools and (with a test runner) run_tests.
func (w *Workspace) Definitions() []llm.Tool {
	names := []string{ListFiles, ReadFile, Search}
	if w.Writable() {
		names = append(names, EditFile, WriteFile, DeleteFile)
		if w.tests != nil {
			names = append(names, RunTests)
		}
	}
	out := make([]llm.Tool, len(names))
	for i, n := range names {
		out[i] = definitions[n]
	}
	return out
}

// FinishTool is the finish tool whose parameters are the role's answer.
func FinishTool(description string, schema json.RawMessage) llm.Tool {
	return llm.Tool{Name: Finish, Description: description, Parameters: schema}
}

// callArgs holds the arguments of any tool call; each tool reads its own.
type callArgs struct {
	Path       string `json:"path"`
	Pattern    string `json:"pattern"`
	Glob       string `json:"glob"`
	Offset     int    `json:"offset"`
	Limit      int    `json:"limit"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
	Content    string `json:"content"`
}

// Call runs one tool call (finish excluded). The result is for the model;
// isErr marks a refusal or failure it should read as such. err is a
// failure of orch or git that ends the run.
func (w *Workspace) Call(ctx context.Context, name string, args json.RawMessage) (result string, isErr bool, err error) {
	var a callArgs
	def, known := definitions[name]
	if !known || !w.offers(name) {
		return fmt.Sprintf("unknown tool %q: use one of the tools offered, and finish to answer", name), true, nil
	}
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage(`{}`)
	}
	if problem, bad := ArgsProblem(args); bad {
		return fmt.Sprintf("%s was not run: %s (parameters: %s)", name, problem, def.Parameters), true, nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return fmt.Sprintf("the arguments of %s are not valid: %s (parameters: %s)", name, fieldProblem(err), def.Parameters), true, nil
	}
	missing := func(field string, v string) bool { return v == "" && !hasKey(args, field) }
	var out string
	switch name {
	case ListFiles:
		out, err = w.ListFiles(ctx, a.Path, a.Pattern)
	case ReadFile:
		if missing("path", a.Path) {
			return "path is required", true, nil
		}
		out, err = w.ReadFile(ctx, a.Path, a.Offset, a.Limit)
	case Search:
		if a.Pattern == "" {
			return "pattern is required", true, nil
		}
		out, err = w.Search(ctx, a.Pattern, a.Path, a.Glob)
	case EditFile:
		if missing("path", a.Path) || !hasKey(args, "old_string") || !hasKey(args, "new_string") {
			return "path, old_string and new_string are required", true, nil
		}
		out, err = w.EditFile(ctx, a.Path, a.OldString, a.NewString, a.ReplaceAll)
	case WriteFile:
		if missing("path", a.Path) || !hasKey(args, "content") {
			return "path and content are required", true, nil
		}
		out, err = w.WriteFile(ctx, a.Path, a.Content)
	case DeleteFile:
		if missing("path", a.Path) {
			return "path is required", true, nil
		}
		out, err = w.DeleteFile(ctx, a.Path)
	case RunTests:
		out, err = w.RunTests(ctx)
	}
	if err != nil {
		if IsToolError(err) {
			return err.Error(), true, nil
		}
		return "", true, err
	}
	return out, false, nil
}

// offers reports whether the workspace offers tool name.
func (w *Workspace) offers(name string) bool {
	return slices.ContainsFunc(w.Definitions(), func(t llm.Tool) bool { return t.Name == name })
}

func hasKey(args json.RawMessage, key string) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return false
	}
	_, ok := m[key]
	return ok
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

func asGit(err error, target **gitx.Error) bool { return errors.As(err, target) }
