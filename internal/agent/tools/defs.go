package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
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

// The parameters of each tool but finish (whose parameters are the role's
// answer). A tool's JSON schema is derived from its type (llm.SchemaFor:
// a field without omitempty is required, desc is the description the
// model reads), and a call's arguments are decoded into it strictly:
// an unknown parameter or one of the wrong type is a tool error the model
// reads.
type (
	ListFilesArgs struct {
		Path    string `json:"path,omitempty" desc:"a folder to list, relative to the repository root; empty for all"`
		Pattern string `json:"pattern,omitempty" desc:"a glob matched against the path, or the file name when it has no '/', e.g. *.go"`
	}
	ReadFileArgs struct {
		Path   string `json:"path"`
		Offset int    `json:"offset,omitempty" desc:"first line, 1-based"`
		Limit  int    `json:"limit,omitempty" desc:"number of lines (default 2000)"`
	}
	SearchArgs struct {
		Pattern string `json:"pattern" desc:"a regular expression"`
		Path    string `json:"path,omitempty" desc:"a folder or file to search in"`
		Glob    string `json:"glob,omitempty" desc:"only files whose path or name matches this glob"`
	}
	EditFileArgs struct {
		Path       string `json:"path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all,omitempty"`
	}
	WriteFileArgs struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	DeleteFileArgs struct {
		Path string `json:"path"`
	}
	RunTestsArgs struct{}
)

// spec is one tool: what the model reads about it and the type of its
// parameters.
type spec struct {
	description string
	params      any
}

// specs holds every tool but finish.
var specs = map[string]spec{
	ListFiles:  {"List the repository's tracked files (capped, with a count of the rest).", ListFilesArgs{}},
	ReadFile:   {"Read a tracked file as numbered lines. For codegen the file is shown as edited so far.", ReadFileArgs{}},
	Search:     {"Search the tracked files for a regular expression; answers path:line:text lines (capped).", SearchArgs{}},
	EditFile:   {"Replace old_string with new_string in a file of the file plan. old_string must match exactly once (whitespace included) unless replace_all is true.", EditFileArgs{}},
	WriteFile:  {"Create a file of the file plan, or replace its whole content. Prefer edit_file to change part of an existing file.", WriteFileArgs{}},
	DeleteFile: {"Delete a file the file plan marks with intent delete.", DeleteFileArgs{}},
	RunTests:   {"Run the project's test suites (sandboxed, like `orch test`) on your edits so far; answers the summary and the failing tests' output. Limited per run.", RunTestsArgs{}},
}

// definitions of every tool but finish, derived from specs on first use
// (by reflection and JSON encoding: not work for every command's start).
var definitions = sync.OnceValue(func() map[string]llm.Tool {
	out := make(map[string]llm.Tool, len(specs))
	for name, s := range specs {
		schema, err := llm.SchemaFor(s.params)
		if err != nil {
			panic(fmt.Sprintf("tool %s: %v", name, err)) // a programming error, caught by every test of the package
		}
		out[name] = llm.Tool{Name: name, Description: s.description, Parameters: schema}
	}
	return out
})

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
		out[i] = definitions()[n]
	}
	return out
}

// FinishTool is the finish tool whose parameters are the role's answer.
func FinishTool(description string, schema json.RawMessage) llm.Tool {
	return llm.Tool{Name: Finish, Description: description, Parameters: schema}
}

// Call runs one tool call (finish excluded). The result is for the model;
// isErr marks a refusal or failure it should read as such. err is a
// failure of orch or git that ends the run.
func (w *Workspace) Call(ctx context.Context, name string, args json.RawMessage) (result string, isErr bool, err error) {
	if _, known := definitions()[name]; !known || !w.offers(name) {
		return fmt.Sprintf("unknown tool %q: use one of the tools offered, and finish to answer", name), true, nil
	}
	var out, problem string
	switch name {
	case ListFiles:
		var a ListFilesArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			out, err = w.ListFiles(ctx, a.Path, a.Pattern)
		}
	case ReadFile:
		var a ReadFileArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			out, err = w.ReadFile(ctx, a.Path, a.Offset, a.Limit)
		}
	case Search:
		var a SearchArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			if a.Pattern == "" {
				return "pattern is required", true, nil
			}
			out, err = w.Search(ctx, a.Pattern, a.Path, a.Glob)
		}
	case EditFile:
		var a EditFileArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			out, err = w.EditFile(ctx, a.Path, a.OldString, a.NewString, a.ReplaceAll)
		}
	case WriteFile:
		var a WriteFileArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			out, err = w.WriteFile(ctx, a.Path, a.Content)
		}
	case DeleteFile:
		var a DeleteFileArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			out, err = w.DeleteFile(ctx, a.Path)
		}
	case RunTests:
		var a RunTestsArgs
		if problem = decodeArgs(name, args, &a); problem == "" {
			out, err = w.RunTests(ctx)
		}
	}
	if problem != "" {
		return problem, true, nil
	}
	if err != nil {
		if IsToolError(err) {
			return err.Error(), true, nil
		}
		return "", true, err
	}
	return out, false, nil
}

// decodeArgs decodes the arguments of tool name into its parameters dst,
// strictly: it answers, in words the model can act on, what is wrong
// (not an object, an unknown parameter, one of the wrong type, a required
// one missing), or "" when nothing is.
func decodeArgs(name string, args json.RawMessage, dst any) string {
	def := definitions()[name]
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage(`{}`)
	}
	if problem, bad := ArgsProblem(args); bad {
		return fmt.Sprintf("%s was not run: %s (parameters: %s)", name, problem, def.Parameters)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fmt.Sprintf("the arguments of %s are not valid: %s (parameters: %s)", name, fieldProblem(err), def.Parameters)
	}
	var sent map[string]json.RawMessage
	_ = json.Unmarshal(args, &sent)
	var missing []string
	for _, r := range required(def.Parameters) {
		if _, ok := sent[r]; !ok {
			missing = append(missing, r)
		}
	}
	switch len(missing) {
	case 0:
		return ""
	case 1:
		return missing[0] + " is required"
	}
	return strings.Join(missing[:len(missing)-1], ", ") + " and " + missing[len(missing)-1] + " are required"
}

// required lists a tool schema's required parameters.
func required(schema json.RawMessage) []string {
	var s struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Required
}

// offers reports whether the workspace offers tool name.
func (w *Workspace) offers(name string) bool {
	return slices.ContainsFunc(w.Definitions(), func(t llm.Tool) bool { return t.Name == name })
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }

func asGit(err error, target **gitx.Error) bool { return errors.As(err, target) }
