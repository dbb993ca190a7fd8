package event

import (
	"fmt"
	"reflect"
	"strings"
)

// descriptions says when each kind is written; the docs' table shows it.
var descriptions = map[Kind]string{
	KindCreated:        "`orch new` created the task (the event carries its first state)",
	KindRecovered:      "a command found what a crash left and repaired it",
	KindTransition:     "`orch next` (or a phase command entering its phase) took an edge whose condition held",
	KindOverride:       "`orch next --override` moved without checking conditions",
	KindRedo:           "`orch redo` re-opened a phase; the artifacts of it and later phases moved to history",
	KindPhaseStarted:   "a phase's work began; the state marks the phase's actor `running` (a run whose pid is gone no longer blocks)",
	KindPhaseFinished:  "a phase's work ended and its result was committed with moves and the new state; a failed run leaves the actor's sub-state as it was and sets `last_run`",
	KindModelCall:      "a model was called, or its answer read from the cache",
	KindBudgetExceeded: "a budget refused a model call before it was made",
	KindUserInput:      "a person answered a planning question (`orch answer`)",
	KindAdvice:         "the accept advisor's recommendation was written (`orch advise`)",
	KindGitIntent:      "`orch accept`/`orch revert` built its commit and is about to move the branch (logged before any change to the repository)",
	KindGitDone:        "the repository change of a `git_intent` ended: committed or aborted (by the next orch command when the first one died)",
	KindMCPCall:        "an MCP client of `orch mcp` called a tool that acts on the task (logged after the action's own events, whatever the outcome)",
}

// Describe says when events of kind k are written.
func Describe(k Kind) string { return descriptions[k] }

// Field is one kind-specific field of an event.
type Field struct {
	Name     string
	Type     string
	Optional bool
	Doc      string
}

// Fields lists the JSON fields of payload p in the order they are
// declared (a transcript line writes them in sorted order).
func Fields(p Payload) []Field {
	return fields(reflect.TypeOf(p), false)
}

func fields(t reflect.Type, optional bool) []Field {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []Field
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			// An embedded pointer's fields are present together or not at all.
			out = append(out, fields(f.Type, optional || f.Type.Kind() == reflect.Pointer)...)
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, Field{
			Name:     name,
			Type:     typeName(f.Type),
			Optional: optional || strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero"),
			Doc:      f.Tag.Get("doc"),
		})
	}
	return out
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64:
		return "integer"
	case reflect.Float64:
		return "number"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "[object]"
		}
		return "[" + typeName(t.Elem()) + "]"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.Kind().String()
}

// Table renders the catalogue as the Markdown table of docs/artifacts.md.
func Table() string {
	var b strings.Builder
	b.WriteString("| kind | field | type | meaning |\n|---|---|---|---|\n")
	for _, p := range Catalogue() {
		fmt.Fprintf(&b, "| `%s` | | | %s |\n", p.Kind(), Describe(p.Kind()))
		for _, f := range Fields(p) {
			typ := f.Type
			if f.Optional {
				typ += ", optional"
			}
			fmt.Fprintf(&b, "| | `%s` | %s | %s |\n", f.Name, typ, f.Doc)
		}
	}
	return b.String()
}
