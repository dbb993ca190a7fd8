package task

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"strconv"

	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/procstat"
)

// Actors holds state.json's actors: each phase's sub-state.
type Actors map[lifecycle.Phase]Actor

// Actor is one phase's sub-state, state.json's actors.<phase>. The fields
// orch sets are typed; every other field (and a known field whose value is
// not of the type orch writes, such as the seed's "status": null) is kept
// verbatim in Extra and written back unchanged.
type Actor struct {
	Status    lifecycle.Status // "" when absent
	LastRun   lifecycle.Status // failed or cancelled after a failed run
	PID       int              // the process running the phase; 0 when none
	Run       string           // the running run's id
	StartedAt string           // when the running run started (RFC 3339)
	Round     int              // planning rounds done
	Attempt   int              // codegen attempts done
	Extra     map[string]json.RawMessage
}

// isInt reports whether t is a JSON integer as orch writes one: an
// optional minus and decimal digits (a hand-written check, not a regular
// expression compiled when any command starts).
func isInt(t []byte) bool {
	t = bytes.TrimPrefix(t, []byte("-"))
	if len(t) == 0 {
		return false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// UnmarshalJSON reads an actor object; numbers and unknown fields keep
// their exact text.
func (a *Actor) UnmarshalJSON(data []byte) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return err
	}
	if obj == nil {
		return errors.New("expected a JSON object")
	}
	var out Actor
	for k, raw := range obj {
		if !out.setKnown(k, raw) {
			if out.Extra == nil {
				out.Extra = map[string]json.RawMessage{}
			}
			out.Extra[k] = raw
		}
	}
	*a = out
	return nil
}

// setKnown sets a typed field from raw when k is one and raw is of its
// type: a non-empty string, a positive integer (a zero value would not be
// written back; anything else is kept as it is, in Extra).
func (a *Actor) setKnown(k string, raw json.RawMessage) bool {
	str := func(dst *string) bool {
		var s string
		if jsonKind(raw) != "string" || json.Unmarshal(raw, &s) != nil || s == "" {
			return false
		}
		*dst = s
		return true
	}
	num := func(dst *int) bool {
		t := bytes.TrimSpace(raw)
		if !isInt(t) {
			return false
		}
		n, err := strconv.Atoi(string(t))
		if err != nil || n <= 0 {
			return false
		}
		*dst = n
		return true
	}
	switch k {
	case "status":
		var s string
		if !str(&s) {
			return false
		}
		a.Status = lifecycle.Status(s)
		return true
	case "last_run":
		var s string
		if !str(&s) {
			return false
		}
		a.LastRun = lifecycle.Status(s)
		return true
	case "pid":
		return num(&a.PID)
	case "run":
		return str(&a.Run)
	case "started_at":
		return str(&a.StartedAt)
	case "round":
		return num(&a.Round)
	case "attempt":
		return num(&a.Attempt)
	}
	return false
}

// fields returns every field of the actor as JSON, typed and extra.
func (a Actor) fields() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(a.Extra)+7)
	maps.Copy(m, a.Extra)
	setStr := func(k, v string) {
		if v != "" {
			b, _ := encodeJSON(v)
			m[k] = b
		}
	}
	setInt := func(k string, v int) {
		if v != 0 {
			m[k] = json.RawMessage(strconv.Itoa(v))
		}
	}
	setStr("status", string(a.Status))
	setStr("last_run", string(a.LastRun))
	setInt("pid", a.PID)
	setStr("run", a.Run)
	setStr("started_at", a.StartedAt)
	setInt("round", a.Round)
	setInt("attempt", a.Attempt)
	return m
}

// MarshalJSON writes the actor with its keys sorted.
func (a Actor) MarshalJSON() ([]byte, error) {
	return encodeJSON(a.fields())
}

// Values returns the actor's fields as plain values (numbers as
// json.Number), for display.
func (a Actor) Values() map[string]any {
	out := map[string]any{}
	for k, raw := range a.fields() {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			out[k] = v
		}
	}
	return out
}

// Clone returns a copy that shares nothing with a.
func (a Actor) Clone() Actor {
	if a.Extra != nil {
		a.Extra = maps.Clone(a.Extra)
	}
	return a
}

// Set is an extra field's setter: v is stored as its JSON; a nil v
// removes the field.
func (a *Actor) Set(k string, v any) error {
	if v == nil {
		delete(a.Extra, k)
		return nil
	}
	b, err := encodeJSON(v)
	if err != nil {
		return err
	}
	if a.Extra == nil {
		a.Extra = map[string]json.RawMessage{}
	}
	a.Extra[k] = b
	return nil
}

// ClearRun removes the fields of a running run (pid, run id, start time).
func (a *Actor) ClearRun() {
	a.PID, a.Run, a.StartedAt = 0, "", ""
}

// LivePID reports the pid of a live process running the actor's phase: the
// status is running and the pid is a live process. A pid that no longer
// exists, or is a zombie (killed, not yet reaped), means the run died and
// no longer blocks.
func (a Actor) LivePID() (int, bool) {
	if a.Status != lifecycle.StatusRunning || a.PID <= 0 {
		return 0, false
	}
	if !procstat.Live(a.PID) {
		return 0, false
	}
	return a.PID, true
}

// Interrupted reports whether the actor's run was cut short: its status
// is running but its process is gone (killed, or a zombie). Status lines
// show such a run as "interrupted", not "running".
func (a Actor) Interrupted() bool {
	_, live := a.LivePID()
	return a.Status == lifecycle.StatusRunning && !live
}

// Clone returns a deep copy of the actors.
func (as Actors) Clone() Actors {
	out := make(Actors, len(as)+1)
	for k, v := range as {
		out[k] = v.Clone()
	}
	return out
}
