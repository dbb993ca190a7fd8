package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// orderedJSON is a JSON object kept as its members in their original order,
// each value untouched. It lets orch change one field of a file it does
// not own (a person may have added fields) and write everything else back
// as it was.
type orderedJSON []jsonMember

type jsonMember struct {
	Key   string
	Value json.RawMessage
}

// parseOrderedJSON reads one JSON object. Duplicate keys are refused (the
// artifact decoders refuse them too, and an edit must not pick one).
func parseOrderedJSON(data []byte) (orderedJSON, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("not a JSON object: starts with %v", tok)
	}
	var obj orderedJSON
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("read key: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %v, not a string", tok)
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("value of %q: %w", key, err)
		}
		obj = append(obj, jsonMember{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("end of object: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON object")
	}
	return obj, nil
}

// get returns the value of key.
func (o orderedJSON) get(key string) (json.RawMessage, bool) {
	if i := slices.IndexFunc(o, func(m jsonMember) bool { return m.Key == key }); i >= 0 {
		return o[i].Value, true
	}
	return nil, false
}

// set replaces the value of key in place, or appends the member.
func (o *orderedJSON) set(key string, v json.RawMessage) {
	for i, m := range *o {
		if m.Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, jsonMember{Key: key, Value: v})
}

// setValue marshals v and sets it.
func (o *orderedJSON) setValue(key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	o.set(key, data)
	return nil
}

// front moves the named keys, those present, to the front in that order.
func (o orderedJSON) front(keys ...string) orderedJSON {
	out := make(orderedJSON, 0, len(o))
	for _, k := range keys {
		if v, ok := o.get(k); ok {
			out = append(out, jsonMember{Key: k, Value: v})
		}
	}
	for _, m := range o {
		found := false
		for _, k := range keys {
			found = found || m.Key == k
		}
		if !found {
			out = append(out, m)
		}
	}
	return out
}

// MarshalJSON writes the members in order.
func (o orderedJSON) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(m.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		if len(m.Value) == 0 {
			b.WriteString("null")
		} else {
			b.Write(m.Value)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}
