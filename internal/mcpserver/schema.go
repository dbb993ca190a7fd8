package mcpserver

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// RunPhases are the phases run_phase runs, in lifecycle order: those
// with a worker in orch's registry but the human gates (accept, revert).
func RunPhases() []string {
	var out []string
	for _, p := range lifecycle.Phases() {
		if isPhase(p) {
			out = append(out, string(p))
		}
	}
	return out
}

// typeSchemas describe the types the inference cannot see through:
// lifecycle.Phase is an enum of the lifecycle's phases (one source for
// every argument and result that names a phase), and the transcript's
// events and a phase's actor are written by their own MarshalJSON (an
// event's kind-specific fields are flattened into it, an actor keeps
// fields orch does not know).
func typeSchemas() map[reflect.Type]*jsonschema.Schema {
	phases := make([]any, 0, len(lifecycle.Phases()))
	for _, p := range lifecycle.Phases() {
		phases = append(phases, string(p))
	}
	str := func(desc string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: desc} }
	return map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[lifecycle.Phase](): {Type: "string", Enum: phases},
		reflect.TypeFor[task.Event](): {
			Type:        "object",
			Description: "a transcript event: the common fields and the fields of its kind (docs/artifacts.md)",
			Required:    []string{"seq", "ts", "kind", "prev"},
			Properties: map[string]*jsonschema.Schema{
				"seq":  {Type: "integer"},
				"ts":   str("when, RFC 3339"),
				"kind": str("the event's kind (created, transition, phase_started, model_call, mcp_call, …)"),
				"prev": str("sha256 hex of the previous line; empty for the first"),
			},
		},
		reflect.TypeFor[task.Actor](): {Type: "object", Description: "a phase's actor sub-state (status, round, attempt, run, …)"},
	}
}

// schemaFor infers T's JSON schema as the SDK would (jsonschema-go's
// For), with typeSchemas. A phase that may be null (a *lifecycle.Phase)
// gets null in its enum too.
func schemaFor[T any]() *jsonschema.Schema {
	s, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: typeSchemas()})
	if err != nil {
		panic(fmt.Sprintf("mcpserver: schema of %v: %v", reflect.TypeFor[T](), err))
	}
	nullableEnums(s)
	return s
}

// nullableEnums adds null to the enum of every nullable schema below s.
func nullableEnums(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if s.Enum != nil {
		for _, t := range s.Types {
			if t == "null" {
				s.Enum = append(s.Enum, nil)
				break
			}
		}
	}
	for _, c := range s.Properties {
		nullableEnums(c)
	}
	nullableEnums(s.Items)
	nullableEnums(s.AdditionalProperties)
	for _, c := range s.AnyOf {
		nullableEnums(c)
	}
}

// enumArg narrows a string argument of a tool to its values.
type enumArg struct {
	prop   string
	values []string
}

// apply sets the enum on tool's input schema s; a property the schema
// lacks is a mistake in tools().
func (e enumArg) apply(tool string, s *jsonschema.Schema) {
	p := s.Properties[e.prop]
	if p == nil {
		panic(fmt.Sprintf("mcpserver: tool %s has no argument %q to restrict", tool, e.prop))
	}
	p.Enum = make([]any, len(e.values))
	for i, v := range e.values {
		p.Enum[i] = v
	}
}
