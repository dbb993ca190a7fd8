package event

import (
	"encoding/json"
	"flag"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/orchdev/orch/internal/docblock"
)

var update = flag.Bool("update", false, "rewrite the generated event table in docs/artifacts.md")

const (
	tableBegin = "<!-- BEGIN GENERATED: event kinds (go test ./internal/event -update) -->"
	tableEnd   = "<!-- END GENERATED -->"
)

// TestDocsTable keeps the event table in docs/artifacts.md equal to the
// one generated from the payload types. Run `go test ./internal/event
// -update` to regenerate it.
func TestDocsTable(t *testing.T) {
	docblock.Check(t, filepath.Join("..", "..", "docs", "artifacts.md"), tableBegin, tableEnd,
		"\n"+Table(), *update, "go test ./internal/event -update")
}

// TestCatalogue: every kind is listed once, described, has documented
// fields, and none of its fields clashes with a common field of a line.
func TestCatalogue(t *testing.T) {
	common := map[string]bool{"seq": true, "ts": true, "kind": true, "state": true, "moves": true, "prev": true}
	seen := map[Kind]bool{}
	for _, p := range Catalogue() {
		k := p.Kind()
		if seen[k] {
			t.Errorf("kind %s listed twice", k)
		}
		seen[k] = true
		if Describe(k) == "" {
			t.Errorf("kind %s has no description", k)
		}
		for _, f := range Fields(p) {
			if common[f.Name] {
				t.Errorf("kind %s: field %s clashes with a common field", k, f.Name)
			}
			if f.Doc == "" {
				t.Errorf("kind %s: field %s has no doc tag", k, f.Name)
			}
		}
	}
	if len(seen) != len(descriptions) {
		t.Errorf("%d kinds in the catalogue, %d described", len(seen), len(descriptions))
	}
}

// TestFieldsMatchJSON: the documented fields are exactly the keys a fully
// populated payload writes.
func TestFieldsMatchJSON(t *testing.T) {
	for _, p := range Catalogue() {
		v := reflect.New(reflect.TypeOf(p)).Elem()
		fill(v)
		b, err := json.Marshal(v.Interface())
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, f := range Fields(p) {
			names = append(names, f.Name)
			if _, ok := m[f.Name]; !ok {
				t.Errorf("kind %s: documented field %s is not written", p.Kind(), f.Name)
			}
		}
		if len(m) != len(names) {
			t.Errorf("kind %s writes %d fields, documents %v", p.Kind(), len(m), names)
		}
	}
}

// fill sets every field of v to a non-zero value.
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i))
		}
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64:
		v.SetInt(1)
	case reflect.Float64:
		v.SetFloat(1)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0))
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		m.SetMapIndex(reflect.ValueOf("k").Convert(v.Type().Key()), reflect.Zero(v.Type().Elem()))
		v.Set(m)
	}
}
