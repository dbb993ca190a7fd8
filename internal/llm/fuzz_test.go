package llm

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeCommandResponse feeds arbitrary stdout to the command
// provider's decoder: it must never panic, and what it accepts must be
// consistent with the protocol.
func FuzzDecodeCommandResponse(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`,
		`{"json":{"ok":true},"usage":{"input_tokens":1,"output_tokens":2},"model":"m"}`,
		`{"refusal":"no"}`,
		`{"text":"a"}{"text":"b"}`,
		"\ufeff{\"text\":\"bom\"}",
		`{"text":"\ud800"}`,
		`{"usage":{"input_tokens":-1},"text":""}`,
		"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeCommandResponse(data, CommandProtocolV1)
		if err != nil {
			return
		}
		if got.Usage.InputTokens < 0 || got.Usage.OutputTokens < 0 {
			t.Errorf("accepted negative usage: %+v", got.Usage)
		}
		if !utf8.ValidString(got.Text) {
			t.Errorf("accepted text is not UTF-8: %q", got.Text)
		}
		if !json.Valid(data) {
			t.Errorf("accepted stdout that is not one JSON value: %q", data)
		}
	})
}

// FuzzDecodeScript feeds arbitrary script files to the script decoder.
func FuzzDecodeScript(f *testing.F) {
	for _, s := range []string{
		`{"responses":[{"role":"planner","text":"x"},{"role":"plan_reviewer","json":{"ok":true}}]}`,
		`{"responses":[]}`,
		`{"responses":[{"role":"a","json":null}]}`,
		`{"responses":[{"role":"a","text":"x","json":1}]}`,
		`{"responses":null}`,
		`[]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeScript(data)
		if err != nil {
			return
		}
		if len(entries) == 0 {
			t.Errorf("accepted a script without entries: %q", data)
		}
		for i, e := range entries {
			if strings.TrimSpace(e.Role) == "" {
				t.Errorf("entry %d has a blank role", i)
			}
			if !utf8.ValidString(e.Text) {
				t.Errorf("entry %d text is not UTF-8: %q", i, e.Text)
			}
			if !roleMatches(e.Role, e.Role) {
				t.Errorf("entry %d does not match its own role %q", i, e.Role)
			}
		}
	})
}

// FuzzParseRetryAfter checks that no header value yields a negative or
// unbounded wait.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"7", "0.5", "-1", "1e309", "NaN", "Wed, 25 Nov 2026 10:00:30 GMT", "soon", ""} {
		f.Add(s, "")
		f.Add("", s)
	}
	f.Fuzz(func(t *testing.T, retryAfter, retryAfterMs string) {
		h := http.Header{}
		h.Set("Retry-After", retryAfter)
		h.Set("Retry-After-Ms", retryAfterMs)
		d := parseRetryAfter(h, fixedNow)
		if d < 0 {
			t.Errorf("negative wait %v for %q / %q", d, retryAfter, retryAfterMs)
		}
	})
}

// FuzzCheckJSON feeds arbitrary model answers to CompleteJSON's parsing.
func FuzzCheckJSON(f *testing.F) {
	for _, s := range []string{"```json\n{}\n```", "{\"a\":1}", "```", "``````", "text", "  [1,2] "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		v, err := checkJSON(text, decodeInto[any])
		if err == nil && v == nil && strings.TrimSpace(stripFence(text)) != "null" {
			t.Errorf("accepted %q as nothing", text)
		}
	})
}

// FuzzDecodeCommandResponseV2 feeds arbitrary stdout to the version 2
// decoder: accepted tool calls have a name, a unique id and arguments that
// are one JSON object.
func FuzzDecodeCommandResponseV2(f *testing.F) {
	for _, s := range []string{
		`{"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}`,
		`{"text":"t","tool_calls":[{"function":{"name":"f","arguments":{"x":1}}}]}`,
		`{"tool_calls":[{"id":"a","function":{"name":"f"}},{"id":"a","function":{"name":"g"}}]}`,
		`{"tool_calls":[{"function":{"name":"f","arguments":"{\"p\":\"\\ud800\"}"}}]}`,
		`{"tool_calls":null,"text":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeCommandResponse(data, CommandProtocolV2)
		if err != nil {
			return
		}
		checkToolCalls(t, got.ToolCalls)
		if !json.Valid(data) {
			t.Errorf("accepted stdout that is not one JSON value: %q", data)
		}
	})
}

// checkToolCalls asserts what every accepted tool call satisfies.
func checkToolCalls(t *testing.T, calls []ToolCall) {
	t.Helper()
	ids := map[string]bool{}
	for i, c := range calls {
		if strings.TrimSpace(c.Name) == "" || c.ID == "" || ids[c.ID] {
			t.Errorf("call %d: name %q, id %q (seen %v)", i, c.Name, c.ID, ids[c.ID])
		}
		ids[c.ID] = true
		var obj map[string]any
		if err := json.Unmarshal(c.Arguments, &obj); err != nil || obj == nil {
			t.Errorf("call %d: arguments %q are not a JSON object", i, c.Arguments)
		}
		if !utf8.Valid(c.Arguments) {
			t.Errorf("call %d: arguments are not UTF-8", i)
		}
	}
}

// FuzzDecodeScriptToolCalls feeds arbitrary script entries with tool
// calls to the script decoder.
func FuzzDecodeScriptToolCalls(f *testing.F) {
	for _, s := range []string{
		`{"responses":[{"role":"codegen","tool_calls":[{"name":"read_file","arguments":{"path":"a"}}]}]}`,
		`{"responses":[{"role":"codegen","tool_calls":[{"id":"x","name":"a"},{"id":"x","name":"b"}]}]}`,
		`{"responses":[{"role":"c","tool_calls":[{"name":"f","arguments":"{}"}],"usage":{"input_tokens":1}}]}`,
		`{"responses":[{"role":"c","text":"x","stop_reason":"length"}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeScript(data)
		if err != nil {
			return
		}
		var all []ToolCall
		for _, e := range entries {
			all = append(all, e.ToolCalls...)
			if e.StopReason == "" || checkUsage(e.Usage) != nil {
				t.Errorf("entry %+v", e)
			}
		}
		checkToolCalls(t, all)
	})
}
