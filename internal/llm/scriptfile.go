package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// A script file, replayed by the script provider:
//
//	{"responses": [
//	  {"role": "planner", "text": "free text answer"},
//	  {"role": "plan_reviewer", "json": {"ok": true}},
//	  {"role": "plan_reviewer:risk", "json": {"ok": false}}
//	]}
//
// Each entry has a non-empty role and exactly one of "text" (a string) or
// "json" (any JSON value, returned compacted as the answer's text). Unknown
// fields are refused so that a typo does not go unnoticed.

// scriptEntry is one scripted answer.
type scriptEntry struct {
	Role string
	Text string
}

type scriptFileWire struct {
	Responses []scriptEntryWire `json:"responses"`
}

type scriptEntryWire struct {
	Role string          `json:"role"`
	Text *string         `json:"text"`
	JSON json.RawMessage `json:"json"`
}

// decodeScript parses a script file.
func decodeScript(data []byte) ([]scriptEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w scriptFileWire
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("not a script object {\"responses\": [...]}: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the script object")
	}
	// A script is UTF-8 text. What its answers hold is left alone (a
	// script may replay a hostile answer): CompleteJSON checks it.
	if err := checkUTF8(data); err != nil {
		return nil, err
	}
	if len(w.Responses) == 0 {
		return nil, errors.New(`"responses" is missing or empty`)
	}
	entries := make([]scriptEntry, 0, len(w.Responses))
	for i, e := range w.Responses {
		if strings.TrimSpace(e.Role) == "" {
			return nil, fmt.Errorf("responses[%d]: \"role\" is missing or blank", i)
		}
		hasJSON := len(e.JSON) > 0 && !bytes.Equal(e.JSON, []byte("null"))
		switch {
		case e.Text != nil && hasJSON:
			return nil, fmt.Errorf("responses[%d]: has both \"text\" and \"json\"; give one", i)
		case e.Text != nil:
			entries = append(entries, scriptEntry{Role: e.Role, Text: *e.Text})
		case hasJSON:
			text, err := compactJSON(e.JSON)
			if err != nil {
				return nil, fmt.Errorf("responses[%d].json: %w", i, err)
			}
			entries = append(entries, scriptEntry{Role: e.Role, Text: text})
		default:
			return nil, fmt.Errorf("responses[%d]: needs \"text\" or \"json\"", i)
		}
	}
	return entries, nil
}

// roleMatches reports whether a script entry's role answers a request's
// role: equal, or equal to the request role's part before ':' (entry
// "plan_reviewer" answers "plan_reviewer:risk").
func roleMatches(entryRole, reqRole string) bool {
	if entryRole == reqRole {
		return true
	}
	base, _, found := strings.Cut(reqRole, ":")
	return found && entryRole == base
}
