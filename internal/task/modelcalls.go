package task

import "github.com/orchdev/orch/internal/event"

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
