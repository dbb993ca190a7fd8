package task

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestEventMarshalOrderAndRoundTrip(t *testing.T) {
	t.Parallel()
	st := State{Phase: "review", Revision: 3, Task: "x", Actors: actorsJSON(`{"codegen": {"status": "done"}}`), CreatedAt: t0, UpdatedAt: t0}
	ev := Event{Seq: 4, TS: t0, Kind: "transition", State: &st, Moves: []Move{{From: "a", To: "b"}},
		Data: map[string]any{"to": "review", "from": "codegen", "reason": "<ok> & done"}, Prev: "abc"}
	b, err := ev.MarshalJSON() // json.Marshal would HTML-escape it again
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":4,"ts":"2026-11-25T10:00:00Z","kind":"transition","from":"codegen","reason":"<ok> & done","to":"review",` +
		`"state":{"phase":"review","actors":{"codegen":{"status":"done"}},"revision":3,"task":"x","created_at":"2026-11-25T10:00:00Z","updated_at":"2026-11-25T10:00:00Z"},` +
		`"moves":[{"from":"a","to":"b"}],"prev":"abc"}`
	if string(b) != want {
		t.Fatalf("got\n%s\nwant\n%s", b, want)
	}
	var back Event
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, err := back.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != want {
		t.Fatalf("round trip changed the line:\n%s", again)
	}
	if back.Seq != 4 || back.Kind != "transition" || back.Prev != "abc" || !reflect.DeepEqual(back.Moves, ev.Moves) || back.Data["reason"] != "<ok> & done" {
		t.Fatalf("decoded %+v", back)
	}
}

func TestEventMarshalMinimal(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Event{Seq: 1, TS: t0, Kind: "note"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"seq":1,"ts":"2026-11-25T10:00:00Z","kind":"note","prev":""}`; string(b) != want {
		t.Fatalf("got %s", b)
	}
}

func TestEventDataClash(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"seq", "ts", "kind", "state", "moves", "prev"} {
		_, err := json.Marshal(Event{Kind: "x", Data: map[string]any{k: 1}})
		if err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("data key %q: err = %v", k, err)
		}
	}
}

func TestEventUnmarshalErrors(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`[]`, `"x"`, `{"seq":"1"}`, `{"seq":1.5}`, `{"ts":"nope"}`, `{"ts":5}`, `{"kind":3}`, `{"prev":[]}`,
		`{"state":{"phase":"nope","revision":1}}`, `{"moves":"a"}`,
	} {
		var ev Event
		if err := json.Unmarshal([]byte(in), &ev); err == nil {
			t.Errorf("Unmarshal(%s) succeeded: %+v", in, ev)
		}
	}
}

func FuzzEvent(f *testing.F) {
	f.Add([]byte(`{"seq":4,"ts":"2026-11-25T10:00:00Z","kind":"transition","from":"codegen","n":1.50,"state":{"phase":"review","actors":{},"revision":3,"task":"x","created_at":"2026-11-25T10:00:00Z","updated_at":"2026-11-25T10:00:00Z"},"moves":[{"from":"a","to":"b"}],"prev":"abc"}`))
	f.Add([]byte(`{"seq":1,"ts":"2026-11-25T10:00:00+02:00","kind":"note","prev":"","x":{"y":[1,"\u2028"]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev Event
		if err := json.Unmarshal(data, &ev); err != nil {
			return
		}
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatalf("marshal of decoded %q: %v", data, err)
		}
		var back Event
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatalf("re-decode %s: %v", line, err)
		}
		again, err := json.Marshal(back)
		if err != nil {
			t.Fatal(err)
		}
		if string(again) != string(line) {
			t.Fatalf("not stable:\n%s\n%s", line, again)
		}
		if strings.Contains(string(line), "\n") {
			t.Fatalf("line contains a newline: %q", line)
		}
	})
}

// FuzzDecodeValue: an event's field decodes to what a decoder with
// UseNumber gives, whatever the bytes.
func FuzzDecodeValue(f *testing.F) {
	for _, s := range []string{`12`, `-0.5e3`, `"a\u00e9\n"`, `true`, `false`, `null`, `{"a":[1,"b"]}`, `[]`, ` 1`, `1 2`, `"a" "b"`, `"\ud800"`, "\"\xff\"", `-`, `01`, ``, `tru`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, gerr := decodeValue(raw)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var want any
		werr := dec.Decode(&want)
		if (gerr == nil) != (werr == nil) || gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeValue(%q) = %#v, %v; a decoder gives %#v, %v", raw, got, gerr, want, werr)
		}
	})
}
