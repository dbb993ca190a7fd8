package tools

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Describe is the short form of a tool call a person reads:
// "read command.go:780-792", "edit command.go", "search SuggestionsMin".
func Describe(name string, raw json.RawMessage) string {
	// Leniently: the description of a call with broken arguments shows
	// what could be read.
	switch name {
	case ReadFile:
		var a ReadFileArgs
		_ = json.Unmarshal(raw, &a)
		path := oneLine(a.Path, 80)
		switch {
		case a.Offset > 0 && a.Limit > 0:
			return fmt.Sprintf("read %s:%d-%d", path, a.Offset, a.Offset+a.Limit-1)
		case a.Offset > 0:
			return fmt.Sprintf("read %s:%d-", path, a.Offset)
		}
		return "read " + path
	case EditFile:
		var a EditFileArgs
		_ = json.Unmarshal(raw, &a)
		return "edit " + oneLine(a.Path, 80)
	case WriteFile:
		var a WriteFileArgs
		_ = json.Unmarshal(raw, &a)
		return "write " + oneLine(a.Path, 80)
	case DeleteFile:
		var a DeleteFileArgs
		_ = json.Unmarshal(raw, &a)
		return "delete " + oneLine(a.Path, 80)
	case Search:
		var a SearchArgs
		_ = json.Unmarshal(raw, &a)
		s := "search " + oneLine(a.Pattern, 60)
		if path := oneLine(a.Path, 80); path != "" {
			s += " in " + path
		}
		return s
	case ListFiles:
		var a ListFilesArgs
		_ = json.Unmarshal(raw, &a)
		path := oneLine(a.Path, 80)
		if path == "" && a.Pattern == "" {
			return "list files"
		}
		return "list " + strings.TrimSpace(path+" "+oneLine(a.Pattern, 40))
	case RunTests:
		return "run the tests"
	}
	return oneLine(name, 40)
}

// oneLine keeps the first line of s, at most n runes, without control
// characters (a model's arguments are untrusted text shown in a terminal).
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return -1
		}
		return r
	}, s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
