package board

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/task"
)

// Entry is one line of the timeline.
type Entry struct {
	Seq    int64
	TS     time.Time
	Kind   string
	Text   string
	Detail string
	Class  string
}

// timeline turns the transcript into lines a person reads.
func timeline(evs []task.Event) []Entry {
	out := make([]Entry, 0, len(evs))
	for _, ev := range evs {
		e := Entry{Seq: ev.Seq, TS: ev.TS, Kind: string(ev.Kind), Class: string(ev.Kind)}
		d := ev.Data
		str := func(k string) string {
			v, _ := d[k].(string)
			return v
		}
		switch ev.Kind {
		case "created":
			e.Text = "task created"
		case "transition":
			e.Text = fmt.Sprintf("%s → %s", str("from"), str("to"))
			e.Detail = joinNonEmpty(str("label"), str("reason"))
		case "override":
			e.Text = fmt.Sprintf("override %s → %s", str("from"), str("to"))
			e.Detail = "reason: " + str("reason")
			if sk, ok := d["skipped_phases"].([]any); ok && len(sk) > 0 {
				e.Detail += fmt.Sprintf("; skipped %v", sk)
			}
		case "redo":
			e.Text = fmt.Sprintf("redo %s → %s", str("from"), str("to"))
			e.Detail = joinNonEmpty(str("reason"), archivedNote(str("archived")))
		case "phase_started":
			e.Text = fmt.Sprintf("%s started", str("phase"))
			e.Detail = "run " + str("run")
		case "phase_finished":
			e.Text = fmt.Sprintf("%s finished: %s", str("phase"), str("status"))
			e.Detail = joinNonEmpty(str("error"), summaryText(d["summary"]))
			if st := str("status"); st == "failed" || st == "cancelled" {
				e.Class += " bad"
			}
		case "model_call":
			e.Text = fmt.Sprintf("%s: %s %s", str("role"), str("provider"), str("model"))
			e.Detail = fmt.Sprintf("%v in / %v out tokens, %v ms", d["tokens_in"], d["tokens_out"], d["latency_ms"])
			if c, ok := d["cost_usd"].(json.Number); ok {
				if f, err := c.Float64(); err == nil {
					e.Detail += ", " + agent.FormatUSD(f)
				}
			}
			if b, _ := d["cached"].(bool); b {
				e.Detail += ", from orch's cache"
			}
			if tc, ok := d["tool_calls"].([]any); ok && len(tc) > 0 {
				e.Detail += fmt.Sprintf(", tools %v", tc)
			}
			if er := str("error"); er != "" {
				e.Detail += "; error: " + er
				e.Class += " bad"
			}
		case "budget_exceeded":
			e.Text = "budget exceeded"
			e.Detail = str("error")
			e.Class += " bad"
		case "user_input":
			e.Text = fmt.Sprintf("answered %s", str("question"))
			e.Detail = str("answer")
		case "advice":
			e.Text = "accept advisor: " + str("recommendation")
			e.Detail = "confidence " + str("confidence")
		case "git_intent":
			e.Text = fmt.Sprintf("git %s: about to move %s", str("op"), str("ref"))
			e.Detail = fmt.Sprintf("%.12s → %.12s", str("old"), str("new"))
		case "git_done":
			e.Text = fmt.Sprintf("git %s: %s", str("op"), str("outcome"))
			e.Detail = joinNonEmpty(str("commit"), str("note"))
		case "recovered":
			e.Text = "recovered after a crash"
		default:
			e.Text = string(ev.Kind)
		}
		out = append(out, e)
	}
	return out
}

func archivedNote(a string) string {
	if a == "" {
		return ""
	}
	return "archived in " + a
}

func joinNonEmpty(parts ...string) string {
	var keep []string
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			keep = append(keep, p)
		}
	}
	return strings.Join(keep, " — ")
}

// summaryText renders a phase's summary map as key=value pairs, sorted.
func summaryText(v any) string {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b, err := json.Marshal(m[k])
		if err != nil {
			continue
		}
		parts = append(parts, k+"="+clip.Runes(string(b), 80))
	}
	return strings.Join(parts, " ")
}
