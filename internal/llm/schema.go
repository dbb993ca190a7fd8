package llm

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// SchemaFor returns a JSON schema for the Go type of v (a value or a
// pointer; nil pointers of a type work: SchemaFor((*Plan)(nil))).
//
// It follows encoding/json: exported fields under their json tag names,
// "-" skipped, embedded structs inlined. A field with omitempty or
// omitzero is optional; every other field is required. Objects are closed
// (additionalProperties false); "required" is left out when no field is.
// []T and [N]T are arrays, []byte a string,
// map[string]T an object of T values, *T is T or null, time.Time a
// date-time string, json.RawMessage, interfaces and other types with their
// own JSON encoding any value. Two optional struct tags refine a field:
// desc:"..." becomes its description and enum:"a,b,c" its allowed values.
// Recursive types, channels, functions and complex numbers are refused.
func SchemaFor(v any) (json.RawMessage, error) {
	t := reflect.TypeOf(v)
	if t == nil {
		return nil, fmt.Errorf("schema for nil: no type")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	g := schemaGen{visiting: map[reflect.Type]bool{}}
	s, err := g.schema(t)
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", t, err)
	}
	out, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema for %s: %w", t, err)
	}
	return out, nil
}

type schemaGen struct {
	visiting map[reflect.Type]bool
}

var (
	timeType       = reflect.TypeFor[time.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	jsonMarshaler  = reflect.TypeFor[json.Marshaler]()
	textMarshaler  = reflect.TypeFor[encoding.TextMarshaler]()
)

func (g *schemaGen) schema(t reflect.Type) (map[string]any, error) {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}, nil
	case t == rawMessageType:
		return map[string]any{}, nil
	case t.Kind() != reflect.Pointer && (t.Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(jsonMarshaler)):
		return map[string]any{}, nil
	case t.Kind() != reflect.Pointer && (t.Implements(textMarshaler) || reflect.PointerTo(t).Implements(textMarshaler)):
		return map[string]any{"type": "string"}, nil
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Pointer:
		inner, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return nullable(inner), nil
	case reflect.Slice, reflect.Array:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}, nil
		}
		items, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		s := map[string]any{"type": "array", "items": items}
		if t.Kind() == reflect.Array {
			s["minItems"], s["maxItems"] = t.Len(), t.Len()
		}
		return s, nil
	case reflect.Map:
		switch t.Key().Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		default:
			return nil, fmt.Errorf("map key type %s has no JSON form", t.Key())
		}
		values, err := g.schema(t.Elem())
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Struct:
		return g.structSchema(t)
	default:
		return nil, fmt.Errorf("type %s has no JSON schema", t)
	}
}

// nullable lets a schema also accept null.
func nullable(s map[string]any) map[string]any {
	switch typ := s["type"].(type) {
	case string:
		s["type"] = []string{typ, "null"}
		return s
	case nil:
		if len(s) == 0 {
			return s // already accepts anything, null included
		}
	}
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}

func toAnySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func (g *schemaGen) structSchema(t reflect.Type) (map[string]any, error) {
	if g.visiting[t] {
		return nil, fmt.Errorf("recursive type %s is not supported", t)
	}
	g.visiting[t] = true
	defer delete(g.visiting, t)

	props := map[string]any{}
	required := []string{}
	if err := g.addFields(t, props, &required, map[string]bool{}); err != nil {
		return nil, err
	}
	s := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		s["required"] = required
	}
	return s, nil
}

// addFields adds t's fields, inlining embedded structs like encoding/json
// (a field of the outer struct wins over an embedded one of the same name).
func (g *schemaGen) addFields(t reflect.Type, props map[string]any, required *[]string, seen map[string]bool) error {
	var embedded []reflect.StructField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, f)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		s, err := g.schema(f.Type)
		if err != nil {
			return fmt.Errorf("field %s: %w", f.Name, err)
		}
		if d := f.Tag.Get("desc"); d != "" {
			s["description"] = d
		}
		if e := f.Tag.Get("enum"); e != "" {
			s = withEnum(s, strings.Split(e, ","))
		}
		props[name] = s
		if !hasOption(opts, "omitempty") && !hasOption(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
	for _, f := range embedded {
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if err := g.addFields(ft, props, required, seen); err != nil {
			return err
		}
	}
	return nil
}

func hasOption(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// withEnum restricts a string schema (possibly nullable) to values.
func withEnum(s map[string]any, values []string) map[string]any {
	enum := toAnySlice(values)
	if types, ok := s["type"].([]string); ok && len(types) == 2 && types[1] == "null" {
		enum = append(enum, nil)
	}
	s["enum"] = enum
	return s
}
