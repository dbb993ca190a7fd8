package task

import (
	"encoding/json"
	"fmt"

	"github.com/orchdev/orch/internal/event"
)

// ModelCalls returns the model_call events among events, decoded with
// event.ReadModelCall (typed, lenient about fields of the wrong type).
func ModelCalls(events []Event) []event.ModelCall {
	var out []event.ModelCall
	for _, ev := range events {
		if ev.Kind == event.KindModelCall {
			out = append(out, event.ReadModelCall(ev.fields()))
		}
	}
	return out
}

// RootDir returns the repository's folder.
func (p *Project) RootDir() string { return p.Root }

// OrchDir returns orch's folder in the repository (.orch).
func (p *Project) OrchDir() string { return p.Dir }

// ModelCalls returns the model calls recorded in task id's transcript.
func (p *Project) ModelCalls(id string) ([]event.ModelCall, error) {
	t, err := p.Open(id)
	if err != nil {
		return nil, err
	}
	events, err := t.Transcript()
	if err != nil {
		return nil, err
	}
	return ModelCalls(events), nil
}

// fields returns the kind-specific fields of e as one JSON object.
func (e Event) fields() []byte {
	raw, err := json.Marshal(e.Data)
	if err != nil { // values read back from JSON always encode again
		return []byte("{}")
	}
	return raw
}

// Decode returns the typed payload of e (event.Decode): the payload it
// was written with, or the one its stored fields decode into.
func (e Event) Decode() (event.Payload, error) {
	if e.Payload != nil {
		return e.Payload, nil
	}
	p, err := event.Decode(e.Kind, e.fields())
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", e.Seq, err)
	}
	return p, nil
}
