package config

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/orchdev/orch/internal/clip"
)

// unknownKeyMsg explains an unknown key: the keys its table knows (read
// from the Config type's toml tags, so the message cannot drift from the
// code) and, when one is close, which was meant.
func unknownKeyMsg(key []string) string {
	t := reflect.TypeOf(Config{})
	table := "the top level"
	for i := 0; i < len(key); {
		known := tomlKeys(t)
		if known == nil {
			break
		}
		next, ok := known[key[i]]
		if !ok {
			names := make([]string, 0, len(known))
			for n := range known {
				names = append(names, n)
			}
			sort.Strings(names)
			kind := "key"
			if i == 0 {
				kind = "table"
			}
			meant := ""
			if near := clip.Nearest(key[i], names); near != "" {
				meant = fmt.Sprintf(" (did you mean %q?)", near)
			}
			return fmt.Sprintf("unknown %s%s; %s knows: %s (see README, Configuration)", kind, meant, table, strings.Join(names, ", "))
		}
		i++
		table = "[" + strings.Join(key[:i], ".") + "]"
		t = next
		if t.Kind() == reflect.Map {
			// The next part is a name of the user's: [providers.NAME].
			t = deref(t.Elem())
			if i < len(key) {
				i++
				table = "[" + strings.Join(key[:i], ".") + "]"
			}
		}
		if t.Kind() == reflect.Slice {
			t = deref(t.Elem())
		}
	}
	return "unknown key (see README, Configuration)"
}

// tomlKeys maps the toml keys of struct type t to their types; nil when t
// is not a struct.
func tomlKeys(t reflect.Type) map[string]reflect.Type {
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		out[name] = deref(f.Type)
	}
	return out
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// UnknownKey explains why the dotted key (test.timeout, providers.x.type)
// is not a key of the configuration: the keys its table knows, and which
// was meant when one is close.
func UnknownKey(dotted string) string {
	return unknownKeyMsg(strings.Split(dotted, "."))
}

// Keys lists the dotted keys of the configuration's fixed tables (test.timeout,
// review.plan_personas, …), sorted; tables of the user's names
// ([providers.NAME], [prices."MODEL"]) are listed by their table only.
func Keys() []string {
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for name, ft := range tomlKeys(t) {
			key := prefix + name
			out = append(out, key)
			if ft.Kind() == reflect.Struct && !isLeaf(ft) {
				walk(key+".", ft)
			}
		}
	}
	walk("", reflect.TypeOf(Config{}))
	sort.Strings(out)
	return out
}

// isLeaf: a struct type the file writes as one value (a duration).
func isLeaf(t reflect.Type) bool {
	_, text := reflect.PointerTo(t).MethodByName("UnmarshalText")
	_, tomlv := reflect.PointerTo(t).MethodByName("UnmarshalTOML")
	return text || tomlv
}
