package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/lazyre"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/patch"
	"github.com/orchdev/orch/internal/safepath"
	"github.com/orchdev/orch/internal/work"
)

// personaPattern is what a reviewer persona may be called (plan and code
// review alike): it becomes part of a role and of file names.
var personaPattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// reviewPanel is what plan review and code review share: several personas
// judge the same material. By default ([review] calls = "panel") they do it
// in one model conversation whose answer carries every persona's verdict;
// with "per_persona" each persona has its own conversation, the first one
// sent alone so that the others read the shared prompt from the provider's
// cache it wrote.
type reviewPanel[T any] struct {
	// Role is the base role (plan_reviewer, code_reviewer); the panel asks
	// as Role, each persona on its own as Role:<persona>.
	Role string
	// Shared is the material every persona judges (the plan, the diff,
	// the repository map). It goes first in every request, marked as the
	// prefix worth caching, so the personas share one cached prompt.
	Shared string
	// Prompt names the instructions' template (the last message); its
	// data is panelPrompt.
	Prompt string
	// Focus says what a persona looks at.
	Focus func(persona string) string
	// Schema and SchemaName describe one persona's answer (finish's
	// parameters in the tool loop); the panel's answer is
	// {"reviews": [one answer with "persona", …]}.
	Schema     json.RawMessage
	SchemaName string
	// Validate checks one persona's answer.
	Validate func(persona string, raw []byte) (T, error)
	// Workspace, when set, gives the personas the read-only tools (used
	// when their provider speaks tool calling).
	Workspace *tools.Workspace
	// Finish describes the finish tool.
	Finish string
	// TaskID names the prompt cache key.
	TaskID string
}

// panelPrompt is the data of a reviewer's instructions: one persona
// (Persona, Focus) or, for the whole panel in one conversation, Panel.
type panelPrompt struct {
	Persona, Focus string
	Panel          []panelMember
	Tools          bool // the reviewers read with tools
}

type panelMember struct{ Persona, Focus string }

// ask asks every persona and returns their answers, answers[i] for
// personas[i]. Asked one by one, one persona's failure does not cancel
// the others: each finishes (its answer cached for a re-run), then the
// failures are returned together.
func (p reviewPanel[T]) ask(ctx context.Context, rt *agent.Runtime, call *agent.Call, personas []string) ([]T, error) {
	system, err := rt.Prompt("system", nil)
	if err != nil {
		return nil, err
	}
	if panelCalls(rt, p.Role) == config.ReviewCallsPanel {
		return p.askPanel(ctx, rt, call, system, personas)
	}
	answers := make([]T, len(personas))
	errs := make([]error, len(personas))
	var wg sync.WaitGroup
	// The first persona's first model call goes alone: it writes the
	// shared prompt into the provider's cache for its siblings.
	warm := make(chan struct{})
	release := sync.OnceFunc(func() { close(warm) })
	for i, persona := range personas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			actx := ctx
			if i == 0 {
				actx = agent.WithFirstCall(ctx, release)
			} else {
				select {
				case <-warm:
				case <-ctx.Done():
				}
			}
			answers[i], errs[i] = p.askOne(actx, rt, call, system, persona)
			if i == 0 {
				// Failed before any model call (a prompt that does not
				// render): the others need not wait.
				release()
			}
		}()
	}
	wg.Wait()
	var failed []error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, fmt.Errorf("%s %s: %w", p.Role, personas[i], err))
		}
	}
	return answers, errors.Join(failed...)
}

// panelCalls is how role's panel is asked: [review] calls, else one
// conversation, except for a script provider (its scripts replay one
// answer per persona).
func panelCalls(rt *agent.Runtime, role string) string {
	if c := rt.Config.Review.Calls; c != "" {
		return c
	}
	if _, cfg, _, err := rt.Provider(role); err == nil && cfg.Type == llm.TypeScript {
		return config.ReviewCallsPerPersona
	}
	return config.ReviewCallsPanel
}

// askOne asks one persona: the system rules, the shared material (cache
// breakpoint), then the persona's instructions.
func (p reviewPanel[T]) askOne(ctx context.Context, rt *agent.Runtime, call *agent.Call, system, persona string) (T, error) {
	var zero T
	instructions, err := rt.Prompt(p.Prompt, panelPrompt{Persona: persona, Focus: p.Focus(persona), Tools: p.Workspace != nil})
	if err != nil {
		return zero, err
	}
	req := p.request(p.Role+":"+persona, system, instructions)
	req.Schema, req.SchemaName = p.Schema, p.SchemaName
	return agent.Ask(ctx, call, req, p.Workspace, p.Finish, func(raw []byte) (T, error) { return p.Validate(persona, raw) })
}

// askPanel asks the whole panel in one conversation: the system rules, the
// shared material (cache breakpoint), then the panel's instructions naming
// every persona and its focus; the answer carries one verdict per persona.
func (p reviewPanel[T]) askPanel(ctx context.Context, rt *agent.Runtime, call *agent.Call, system string, personas []string) ([]T, error) {
	data := panelPrompt{Tools: p.Workspace != nil}
	for _, persona := range personas {
		data.Panel = append(data.Panel, panelMember{Persona: persona, Focus: p.Focus(persona)})
	}
	instructions, err := rt.Prompt(p.Prompt, data)
	if err != nil {
		return nil, err
	}
	schema, err := panelSchema(p.Schema, personas)
	if err != nil {
		return nil, err
	}
	req := p.request(p.Role, system, instructions)
	req.Schema, req.SchemaName = schema, p.SchemaName
	answers, err := agent.Ask(ctx, call, req, p.Workspace, p.Finish+" Give every reviewer's verdict, one entry each.", func(raw []byte) ([]T, error) {
		return p.validatePanel(personas, raw)
	})
	if err != nil {
		return nil, fmt.Errorf("%s panel (%s): %w", p.Role, strings.Join(personas, ", "), err)
	}
	return answers, nil
}

// request is a reviewer's request without its schema.
func (p reviewPanel[T]) request(role, system, instructions string) llm.Request {
	return llm.Request{
		Role: role,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: p.Shared, CacheBreakpoint: true},
			{Role: llm.RoleUser, Content: instructions},
		},
		CacheKey: agent.PromptCacheKey(p.TaskID, p.Role),
	}
}

// panelSchema is the panel's answer schema: {"reviews": [item]}, item one
// persona's answer schema with a "persona" naming the reviewer.
func panelSchema(one json.RawMessage, personas []string) (json.RawMessage, error) {
	var item map[string]any
	if err := json.Unmarshal(one, &item); err != nil {
		return nil, fmt.Errorf("the reviewer's answer schema: %w", err)
	}
	props, ok := item["properties"].(map[string]any)
	if !ok {
		return nil, errors.New("the reviewer's answer schema has no properties")
	}
	props["persona"] = map[string]any{"type": "string", "enum": personas, "description": "the reviewer whose verdict this entry is"}
	required, _ := item["required"].([]any)
	item["required"] = append([]any{"persona"}, required...)
	return json.Marshal(map[string]any{
		"type": "object",
		"properties": map[string]any{"reviews": map[string]any{
			"type": "array", "items": item,
			"description": "one entry per reviewer, every reviewer exactly once",
		}},
		"required":             []string{"reviews"},
		"additionalProperties": false,
	})
}

// validatePanel checks the panel's answer: an entry for every persona,
// none twice or unknown, each a valid answer of its persona; answers come
// back in the order of personas.
func (p reviewPanel[T]) validatePanel(personas []string, raw []byte) ([]T, error) {
	var a struct {
		Reviews *[]json.RawMessage `json:"reviews"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || a.Reviews == nil {
		msg := "reviews is missing"
		if err != nil {
			msg = err.Error()
		}
		return nil, fmt.Errorf(`expected an object {"reviews": [...]} with one entry per reviewer (%s): %s`, strings.Join(personas, ", "), msg)
	}
	index := map[string]int{}
	for i, persona := range personas {
		index[persona] = i
	}
	out := make([]T, len(personas))
	seen := make([]bool, len(personas))
	var probs agent.Problems
	for i, r := range *a.Reviews {
		var id struct {
			Persona string `json:"persona"`
		}
		_ = json.Unmarshal(r, &id)
		k, ok := index[id.Persona]
		switch {
		case !ok:
			probs.Add("reviews[%d].persona: %q is not one of the reviewers (%s)", i, clip.Bytes(id.Persona, 64), strings.Join(personas, ", "))
			continue
		case seen[k]:
			probs.Add("reviews[%d]: reviewer %q has an entry already; give each reviewer one", i, id.Persona)
			continue
		}
		seen[k] = true
		v, err := p.Validate(id.Persona, r)
		if err != nil {
			probs.Add("reviews[%d] (%s): %v", i, id.Persona, err)
			continue
		}
		out[k] = v
	}
	for k, ok := range seen {
		if !ok {
			probs.Add("reviews: no entry for reviewer %q", personas[k])
		}
	}
	return out, probs.Err()
}

// changeWorkspace returns, when role's provider speaks tool calling, the
// read-only workspace of the change under review: the base commit of
// code/codegen.json with code/files/ and the patch's deletions laid over
// it, so read_file shows the changed files as the change leaves them. The
// base is read through run's view of the repository (run.Repo) when the
// change was made on the run's base; a change made on an older commit is
// read from the local repository at that commit.
func changeWorkspace(ctx context.Context, rt *agent.Runtime, run work.Input, role string) (*tools.Workspace, error) {
	if !rt.ToolsFor(role) {
		return nil, nil
	}
	policy, err := rt.Policy()
	if err != nil {
		return nil, err
	}
	taskDir := run.Dir
	base := ""
	if cg := artifact.LoadCodegen(taskDir); cg.OK() {
		base = cg.Value.Base
	}
	var ws *tools.Workspace
	var view work.Repo
	switch {
	case run.Repo != nil && (base == "" || base == run.Repo.Commit()):
		view, base = run.Repo, run.Repo.Commit()
		ws = tools.NewView(view, policy)
	case base == "":
		if run.BaseErr != nil {
			return nil, fmt.Errorf("the repository at the base commit: %w", run.BaseErr)
		}
		return nil, fmt.Errorf("the run was given no view of the repository at its base commit")
	default:
		repo, err := gitx.Open(ctx, run.Root)
		if err != nil {
			return nil, err
		}
		ws, view = tools.New(repo, base, policy), work.LocalRepo(repo, base)
	}
	files := map[string][]byte{}
	var deletes []string
	if d := artifact.LoadDiff(taskDir); d.OK() {
		for _, f := range d.Value.Files {
			if f.NewPath == "" || f.Op == patch.OpDelete {
				deletes = append(deletes, f.OldPath)
				continue
			}
			if data, err := readRegular(taskDir, path.Join(artifact.CodeFilesDir, f.NewPath), artifact.MaxCodeFileBytes); err == nil {
				files[f.NewPath] = data
			}
		}
	}
	ws.Overlay(files, deletes)
	rt.WithOutline(ctx, ws, view)
	return ws, nil
}

// readRegular reads dir/rel (a regular file inside dir, never a symbolic
// link) up to limit bytes.
func readRegular(dir, rel string, limit int64) ([]byte, error) {
	data, _, err := safepath.ReadPart(dir, rel, limit, safepath.Head)
	return data, err
}
