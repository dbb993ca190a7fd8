package task

import (
	"encoding/json"
	"fmt"

	"github.com/orchdev/orch/internal/event"
)

// ModelCalls returns the model_call events among events, read with
// event.ModelCallOf.
func ModelCalls(events []Event) []event.ModelCall {
	var out []event.ModelCall
	for _, ev := range events {
		if ev.Kind == event.KindModelCall {
			out = append(out, event.ModelCallOf(ev.Data))
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

// Decode returns the typed payload of e (event.Decode): the payload it
// was written with, or the one its stored fields decode into.
func (e Event) Decode() (event.Payload, error) {
	if e.Payload != nil {
		return e.Payload, nil
	}
	raw, err := json.Marshal(e.Data)
	if err != nil {
		return nil, fmt.Errorf("event %d (%s): %w", e.Seq, e.Kind, err)
	}
	p, err := event.Decode(e.Kind, raw)
	if err != nil {
		return nil, fmt.Errorf("event %d: %w", e.Seq, err)
	}
	return p, nil
}
