package review

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sync"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/gitx"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/patch"
)

// personaPattern is what a reviewer persona may be called (plan and code
// review alike): it becomes part of a role and of file names.
var personaPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// reviewPanel is what plan review and code review share: several personas
// judge the same material, each in its own run of the same engine.
type reviewPanel[T any] struct {
	// Role is the base role (plan_reviewer, code_reviewer); each persona
	// asks as Role:<persona>.
	Role string
	// Shared is the material every persona judges (the plan, the diff,
	// the repository map). It goes first in every request, marked as the
	// prefix worth caching, so the personas share one cached prompt.
	Shared string
	// Persona renders a persona's instructions, the last message.
	Persona func(persona string) (string, error)
	// Schema and SchemaName describe the answer (finish's parameters in
	// the tool loop).
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

// ask runs every persona concurrently. One persona's failure does not
// cancel the others: each finishes (its answer cached for a re-run), then
// the failures are returned together. answers[i] belongs to personas[i].
func (p reviewPanel[T]) ask(ctx context.Context, rt *agent.Runtime, call *agent.Call, personas []string) ([]T, error) {
	system, err := rt.Prompt("system", nil)
	if err != nil {
		return nil, err
	}
	answers := make([]T, len(personas))
	errs := make([]error, len(personas))
	var wg sync.WaitGroup
	for i, persona := range personas {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i], errs[i] = p.askOne(ctx, call, system, persona)
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

// askOne asks one persona: the system rules, the shared material (cache
// breakpoint), then the persona's instructions.
func (p reviewPanel[T]) askOne(ctx context.Context, call *agent.Call, system, persona string) (T, error) {
	var zero T
	instructions, err := p.Persona(persona)
	if err != nil {
		return zero, err
	}
	req := llm.Request{
		Role: p.Role + ":" + persona,
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: p.Shared, CacheBreakpoint: true},
			{Role: llm.RoleUser, Content: instructions},
		},
		Schema:     p.Schema,
		SchemaName: p.SchemaName,
		CacheKey:   agent.PromptCacheKey(p.TaskID, p.Role),
	}
	return agent.Ask(ctx, call, req, p.Workspace, p.Finish, func(raw []byte) (T, error) { return p.Validate(persona, raw) })
}

// changeWorkspace returns, when role's provider speaks tool calling, the
// read-only workspace of the change under review: the base commit of
// code/codegen.json with code/files/ and the patch's deletions laid over
// it, so read_file shows the changed files as the change leaves them.
func changeWorkspace(ctx context.Context, rt *agent.Runtime, taskDir, role string) (*tools.Workspace, error) {
	if !rt.ToolsFor(role) {
		return nil, nil
	}
	policy, err := rt.Policy()
	if err != nil {
		return nil, err
	}
	repo, err := gitx.Open(ctx, rt.Project.Root)
	if err != nil {
		return nil, err
	}
	base := ""
	if cg := artifact.LoadCodegen(taskDir); cg.OK() {
		base = cg.Value.Base
	}
	if base == "" {
		if base, err = repo.Head(ctx); err != nil {
			return nil, fmt.Errorf("the repository's HEAD: %w", err)
		}
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
	ws := tools.New(repo, base, policy)
	ws.Overlay(files, deletes)
	return ws, nil
}

// readRegular reads dir/rel (a regular file inside dir) up to limit bytes.
func readRegular(dir, rel string, limit int64) ([]byte, error) {
	f, _, err := agent.OpenRegularIn(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, limit))
}
