package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
)

// planning/meeting.jsonl is the minutes of planning: one JSON object per
// line, appended, never rewritten. Two kinds of line are written by orch:
//
//	{"kind":"round","round":2,"ts":"…","provider":"default","model":"gpt-5",
//	 "status":"review_ready","title":"…","digest":"…",
//	 "questions":[{"id":"q1","text":"…","blocking":true,"answered":true}],
//	 "answers":{"q1":"…"},"open":[],"restored":["q1"]}
//	{"kind":"answer","ts":"…","question":"q1","text":"<the question>",
//	 "answer":"…","previous":null}
//
// A person or another tool may add lines of other kinds; they are kept and
// shown to the planner as they are.
const (
	meetingRound  = "round"
	meetingAnswer = "answer"
)

// maxMeetingPrompt bounds the part of the minutes quoted to the planner
// (the most recent lines are kept).
const maxMeetingPrompt = 24 << 10

// meetingQuestion is a question as recorded in a round line.
type meetingQuestion struct {
	ID       string `json:"id"`
	Text     string `json:"text"`
	Blocking bool   `json:"blocking"`
	Answered bool   `json:"answered"`
}

// meetingLine is one line of the minutes. Fields not used by a kind are
// left out.
type meetingLine struct {
	Kind      string            `json:"kind"`
	Round     int               `json:"round,omitempty"`
	TS        time.Time         `json:"ts"`
	Provider  string            `json:"provider,omitempty"`
	Model     string            `json:"model,omitempty"`
	Status    string            `json:"status,omitempty"`
	Title     string            `json:"title,omitempty"`
	Digest    string            `json:"digest,omitempty"`
	Questions []meetingQuestion `json:"questions,omitempty"`
	Answers   map[string]string `json:"answers,omitempty"`
	Open      []string          `json:"open,omitempty"`
	Restored  []string          `json:"restored,omitempty"`
	Question  string            `json:"question,omitempty"`
	Text      string            `json:"text,omitempty"`
	Answer    string            `json:"answer,omitempty"`
	Previous  *string           `json:"previous,omitempty"`
}

// encode renders the line with its newline.
func (l meetingLine) encode() ([]byte, error) {
	data, err := json.Marshal(l)
	if err != nil {
		return nil, fmt.Errorf("encode %s line: %w", artifact.MeetingFile, err)
	}
	return append(data, '\n'), nil
}

// meetingEntry is a line as read back: parsed when it is a JSON object,
// raw otherwise (a hand edit).
type meetingEntry struct {
	Line meetingLine
	Raw  string
	OK   bool
}

// parseMeeting reads the minutes leniently: every non-empty line is an
// entry; a line that is not a JSON object is kept raw.
func parseMeeting(data []byte) []meetingEntry {
	var out []meetingEntry
	for _, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		e := meetingEntry{Raw: string(line)}
		if json.Unmarshal(line, &e.Line) == nil && line[0] == '{' {
			e.OK = true
		}
		out = append(out, e)
	}
	return out
}

// meetingAnswers returns the answers recorded by `orch answer`, the latest
// per question, in the order the questions were first answered.
func meetingAnswers(entries []meetingEntry) []knownAnswer {
	var order []string
	byID := map[string]knownAnswer{}
	for _, e := range entries {
		l := e.Line
		if !e.OK || l.Kind != meetingAnswer || l.Question == "" || strings.TrimSpace(l.Answer) == "" {
			continue
		}
		if _, ok := byID[l.Question]; !ok {
			order = append(order, l.Question)
		}
		text := l.Text
		if text == "" {
			text = "(question text not recorded)"
		}
		byID[l.Question] = knownAnswer{ID: l.Question, Text: text, Blocking: true, Answer: l.Answer}
	}
	out := make([]knownAnswer, 0, len(order))
	for _, id := range order {
		out = append(out, byID[id])
	}
	return out
}

// renderMeeting writes the minutes for the planner, most recent last,
// bounded by max bytes (older lines are left out first).
func renderMeeting(entries []meetingEntry, max int) string {
	lines := make([]string, 0, len(entries))
	for _, e := range entries {
		lines = append(lines, describeMeetingEntry(e))
	}
	total, start := 0, len(lines)
	for start > 0 && total+len(lines[start-1])+1 <= max {
		start--
		total += len(lines[start]) + 1
	}
	var b strings.Builder
	if start > 0 {
		fmt.Fprintf(&b, "(%d earlier line(s) left out)\n", start)
	}
	for _, l := range lines[start:] {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

func describeMeetingEntry(e meetingEntry) string {
	l := e.Line
	switch {
	case e.OK && l.Kind == meetingRound:
		var qs []string
		for _, q := range l.Questions {
			mark := ""
			if q.Blocking {
				mark = " (blocking)"
			}
			qs = append(qs, fmt.Sprintf("%s%s: %s", q.ID, mark, clip.Bytes(q.Text, 300)))
		}
		s := fmt.Sprintf("- round %d → %s: %s", l.Round, l.Status, clip.Bytes(l.Digest, 600))
		if len(qs) > 0 {
			s += "; questions asked: " + strings.Join(qs, " | ")
		}
		return s
	case e.OK && l.Kind == meetingAnswer:
		return fmt.Sprintf("- the person answered %s (%s): %s", l.Question, clip.Bytes(l.Text, 300), clip.Bytes(l.Answer, 2000))
	}
	return "- " + clip.Bytes(e.Raw, 2000)
}
