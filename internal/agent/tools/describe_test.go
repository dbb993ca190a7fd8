package tools

import (
	"encoding/json"
	"testing"
)

func TestDescribeTool(t *testing.T) {
	for _, tc := range []struct {
		name, args, want string
	}{
		{"read_file", `{"path":"command.go","offset":780,"limit":13}`, "read command.go:780-792"},
		{"read_file", `{"path":"command.go","offset":780}`, "read command.go:780-"},
		{"read_file", `{"path":"command.go"}`, "read command.go"},
		{"edit_file", `{"path":"command.go","old_string":"a","new_string":"b"}`, "edit command.go"},
		{"write_file", `{"path":"new.go","content":"x"}`, "write new.go"},
		{"delete_file", `{"path":"old.go"}`, "delete old.go"},
		{"search", `{"pattern":"SuggestionsMinimumDistance"}`, "search SuggestionsMinimumDistance"},
		{"search", `{"pattern":"x","path":"cmd"}`, "search x in cmd"},
		{"list_files", `{}`, "list files"},
		{"run_tests", `{}`, "run the tests"},
		{"read_file", `{"path":"a\u001b[31mred\nsecond"}`, "read a[31mred"},
		{"read_file", `{"path":"x\u202egnp.exe"}`, "read xgnp.exe"},
		{"read_file", `not json`, "read "},
		{"frob", `{}`, "frob"},
	} {
		if got := Describe(tc.name, json.RawMessage(tc.args)); got != tc.want {
			t.Errorf("Describe(%s, %s) = %q, want %q", tc.name, tc.args, got, tc.want)
		}
	}
}
