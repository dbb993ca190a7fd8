package task

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Move is a rename inside the task folder that a state change implies,
// for example archiving code/ into history/2-codegen/code. Both paths are
// relative to the task folder and use '/'.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Event is one line of transcript.jsonl: the common fields plus the
// kind-specific fields, flattened into the same JSON object.
//
// Writers set Payload (one of the kinds of package event); Kind and Data
// are derived from it. Events read back from the log have Kind and Data
// (numbers as json.Number) and no Payload.
//
// A line is written as {"seq":…,"ts":…,"kind":…,<payload keys in sorted
// order>,"state":…,"moves":…,"prev":…}; state and moves only when present.
type Event struct {
	Seq     int64          `json:"seq"`
	TS      time.Time      `json:"ts"`
	Kind    event.Kind     `json:"kind"`
	Payload event.Payload  `json:"-"`
	State   *State         `json:"state,omitempty"`
	Moves   []Move         `json:"moves,omitempty"`
	Data    map[string]any `json:"-"`    // the kind-specific fields of an event read back
	Prev    string         `json:"prev"` // sha256 hex of the previous line; "" for the first
}

// NewEvent returns the event carrying payload p.
func NewEvent(p event.Payload) Event { return Event{Payload: p} }

// flatten fills Kind and Data from the payload, if any. Data values are
// the payload fields' JSON, verbatim.
func (e *Event) flatten() error {
	if e.Payload == nil {
		return nil
	}
	raw, err := encodeJSON(e.Payload)
	if err != nil {
		return fmt.Errorf("encode %s event: %w", e.Payload.Kind(), err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("encode %s event: the payload is not a JSON object: %w", e.Payload.Kind(), err)
	}
	e.Kind = e.Payload.Kind()
	e.Data = make(map[string]any, len(fields))
	for k, v := range fields {
		e.Data[k] = v
	}
	e.Payload = nil
	return nil
}

// isCommonKey reports whether k is one of the common fields of a line.
func isCommonKey(k string) bool {
	switch k {
	case "seq", "ts", "kind", "state", "moves", "prev":
		return true
	}
	return false
}

// MarshalJSON writes the event compactly with keys in a stable order.
func (e Event) MarshalJSON() ([]byte, error) {
	if err := e.flatten(); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	put := func(key string, v any) error {
		val, err := encodeJSON(v)
		if err != nil {
			return fmt.Errorf("event field %q: %w", key, err)
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		} else {
			b.WriteByte('{')
		}
		k, err := encodeJSON(key)
		if err != nil {
			return fmt.Errorf("event key %q: %w", key, err)
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(val)
		return nil
	}
	if err := put("seq", e.Seq); err != nil {
		return nil, err
	}
	if err := put("ts", e.TS); err != nil {
		return nil, err
	}
	if err := put("kind", e.Kind); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(e.Data))
	for k := range e.Data {
		if isCommonKey(k) {
			return nil, fmt.Errorf("event data key %q clashes with a common field", k)
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := put(k, e.Data[k]); err != nil {
			return nil, err
		}
	}
	if e.State != nil {
		s := *e.State
		if s.Actors == nil {
			s.Actors = map[lifecycle.Phase]Actor{}
		}
		if err := put("state", s); err != nil {
			return nil, err
		}
	}
	if len(e.Moves) > 0 {
		if err := put("moves", e.Moves); err != nil {
			return nil, err
		}
	}
	if err := put("prev", e.Prev); err != nil {
		return nil, err
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an event line. Common fields must have the right
// types (a state is validated like state.json); other keys go to Data with
// numbers as json.Number.
func (e *Event) UnmarshalJSON(data []byte) error {
	if jsonKind(data) != "object" {
		return fmt.Errorf("event: expected a JSON object, got %s", describe(data))
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return fmt.Errorf("event: %w", err)
	}
	var ev Event
	for k, raw := range obj {
		var err error
		switch k {
		case "seq":
			ev.Seq, err = strconv.ParseInt(string(raw), 10, 64)
		case "ts":
			if jsonKind(raw) != "string" {
				err = fmt.Errorf("expected an RFC 3339 time string, got %s", describe(raw))
			} else {
				err = ev.TS.UnmarshalJSON(raw)
			}
		case "kind":
			err = json.Unmarshal(raw, &ev.Kind)
		case "prev":
			err = json.Unmarshal(raw, &ev.Prev)
		case "state":
			if jsonKind(raw) == "null" {
				continue
			}
			s, p := parseState(raw, "$.state")
			if p != nil {
				return fmt.Errorf("event: %s: expected %s, got %s", p.Field, p.Expected, p.Got)
			}
			ev.State = &s
		case "moves":
			err = json.Unmarshal(raw, &ev.Moves)
		default:
			var v any
			if v, err = decodeValue(raw); err == nil {
				if ev.Data == nil {
					ev.Data = make(map[string]any)
				}
				ev.Data[k] = v
			}
		}
		if err != nil {
			return fmt.Errorf("event: field %q: %w", k, err)
		}
	}
	*e = ev
	return nil
}

// decodeValue decodes one JSON value of an event's kind-specific fields
// as a decoder with UseNumber does: numbers as json.Number. raw is a
// value a decoding of the line already checked; scalars, the fields of
// most events, are converted without a decoder of their own.
func decodeValue(raw json.RawMessage) (any, error) {
	switch kind := jsonKind(raw); {
	case len(raw) == 0 || len(bytes.TrimSpace(raw)) != len(raw):
	case kind == "number":
		if !json.Valid(raw) {
			break
		}
		return json.Number(raw), nil
	case kind == "string":
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s, nil
		}
	case string(raw) == "true":
		return true, nil
	case string(raw) == "false":
		return false, nil
	case string(raw) == "null":
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}
