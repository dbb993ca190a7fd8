package planner

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzParseMeeting feeds arbitrary planning/meeting.jsonl files (a person
// may edit them) to the lenient minutes reader and what uses it: one
// entry per non-blank line, the answers found are non-blank and unique by
// question, and rendering them into a prompt stays within its budget.
func FuzzParseMeeting(f *testing.F) {
	for _, s := range []string{
		`{"kind":"round","round":1,"ts":"2026-11-25T10:00:00Z","status":"clarifying"}` + "\n" +
			`{"kind":"answer","question":"q1","text":"How many?","answer":"five"}` + "\n",
		"not json\n\n{\"kind\":\"answer\",\"question\":\"q1\",\"answer\":\"  \"}\n",
		`{"kind":"answer","question":"q1","answer":"a","kind":"round"}`,
		"[1,2]\n{\"answers\":{\"q\":1}}\n\x00\xff\n",
		`{"kind":"answer","question":"q\ud800","answer":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := parseMeeting(data)
		lines := 0
		for _, l := range bytes.Split(data, []byte("\n")) {
			if len(bytes.TrimSpace(l)) > 0 {
				lines++
			}
		}
		if len(entries) != lines {
			t.Fatalf("%d entries for %d non-blank lines", len(entries), lines)
		}
		seen := map[string]bool{}
		for _, k := range meetingAnswers(entries) {
			if seen[k.ID] || strings.TrimSpace(k.Answer) == "" || k.ID == "" {
				t.Fatalf("answer %+v (seen %v)", k, seen[k.ID])
			}
			seen[k.ID] = true
		}
		if out := renderMeeting(entries, 4<<10); len(out) > 8<<10 {
			t.Fatalf("rendered %d bytes for a 4 KiB budget", len(out))
		}
	})
}
