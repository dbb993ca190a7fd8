package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/durable"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/worker"
)

// Writable lists the artifacts write_artifact writes: an author's (the
// plan, the file plan, the plan's Markdown), while the task plans. The
// judgments (reviews, test reports, decisions) come from run_phase and
// the human gates; state.json, the transcript and the meeting minutes are
// orch's own.
var Writable = []string{artifact.PlanFile, artifact.FilePlanFile, artifact.PlanMarkdownFile}

// maxMarkdownBytes bounds planning/plan.md written through MCP.
const maxMarkdownBytes = 1 << 20

// Reads are bounded per call; larger files are read in pages.
const (
	defaultReadBytes = 256 << 10
	maxReadBytes     = 4 << 20
)

// ReadInput is read_artifact's arguments.
type ReadInput struct {
	TaskArg
	Path   string `json:"path" jsonschema:"path in the task folder, e.g. planning/planning.ai.json or code/files/main.go"`
	Offset int64  `json:"offset,omitempty" jsonschema:"first byte to read (default 0)"`
	Limit  int64  `json:"limit,omitempty" jsonschema:"bytes to read (default 262144, at most 4194304)"`
}

// ReadOutput is read_artifact's result: text when the bytes read are
// UTF-8, base64 otherwise.
type ReadOutput struct {
	Task      string `json:"task"`
	Path      string `json:"path"`
	URI       string `json:"uri"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
	Offset    int64  `json:"offset"`
	Text      string `json:"text,omitempty"`
	Base64    string `json:"base64,omitempty"`
	Truncated bool   `json:"truncated"`
	Next      Next   `json:"next"`
}

func (s *Server) readArtifact(ctx context.Context, req *mcp.CallToolRequest, in ReadInput) (*mcp.CallToolResult, ReadOutput, error) {
	id, err := s.taskID(in.Task)
	if err != nil {
		return nil, ReadOutput{}, s.refuse("", err)
	}
	if err := CheckArtifactPath(in.Path); err != nil {
		return nil, ReadOutput{}, s.refuse(id, err)
	}
	t, err := s.project.Open(id)
	if err != nil {
		return nil, ReadOutput{}, s.refuse(id, err)
	}
	limit := in.Limit
	if limit <= 0 {
		limit = defaultReadBytes
	}
	limit = min(limit, maxReadBytes)
	f, err := readFile(t.Dir, in.Path, max(in.Offset, 0), limit)
	if errors.Is(err, fs.ErrNotExist) {
		// As `orch show` says of a missing artifact: invalid (exit 4),
		// naming the command that writes it.
		return nil, ReadOutput{}, s.refuse(id, missingError(id, in.Path))
	}
	if err != nil {
		return nil, ReadOutput{}, s.refuse(id, err)
	}
	out := ReadOutput{Task: id, Path: in.Path, URI: ArtifactURI(id, in.Path), Size: f.size, SHA256: f.sha256, Offset: max(in.Offset, 0),
		Truncated: f.truncated, Next: s.nextFor(id)}
	if utf8.Valid(f.data) {
		out.Text = string(f.data)
	} else {
		out.Base64 = base64.StdEncoding.EncodeToString(f.data)
	}
	return nil, out, nil
}

// missingError says that task id has no artifact rel yet (invalid, exit
// 4, as `orch show` says it) and, as its hint, which command and
// run_phase phase write it.
func missingError(id, rel string) error {
	err := exit.New(exit.ErrInvalid, "task %s has no %s yet", id, rel)
	owner := lifecycle.Owner(rel)
	if cmd, ok := worker.Commands()[owner]; ok {
		if isPhase(owner) {
			return err.WithHint("`orch %s` writes it (run_phase %s)", cmd, owner)
		}
		return err.WithHint("`orch %s` writes it", cmd)
	}
	return err
}

// fileRead is a page of an artifact file.
type fileRead struct {
	data      []byte
	size      int64
	sha256    string
	truncated bool
}

// readFile reads limit bytes from offset of task-relative rel, only below
// the task folder (os.Root: no symlink leads out) and only a regular file;
// a missing file is fs.ErrNotExist.
func readFile(taskDir, rel string, offset, limit int64) (fileRead, error) {
	var fr fileRead
	// Never a symbolic link, a named pipe or a device, and never blocking
	// on one (artifact.OpenRegular).
	f, _, err := artifact.OpenRegular(taskDir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return fr, err
	}
	if err != nil {
		return fr, exit.New(exit.ErrInvalid, "%w", err)
	}
	defer f.Close()
	h := sha256.New()
	var page []byte
	var pos int64
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			h.Write(buf[:n])
			// The part of buf[:n] inside [offset, offset+limit).
			lo, hi := max(offset-pos, 0), min(offset+limit-pos, int64(n))
			if lo < hi {
				page = append(page, buf[lo:hi]...)
			}
			pos += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fr, fmt.Errorf("read %s: %w", rel, err)
		}
	}
	fr.data, fr.size, fr.sha256 = page, pos, hex.EncodeToString(h.Sum(nil))
	fr.truncated = offset+int64(len(page)) < pos
	return fr, nil
}

// WriteInput is write_artifact's arguments.
type WriteInput struct {
	TaskArg
	Path    string `json:"path" jsonschema:"planning/planning.ai.json, planning/plan.files.json or planning/plan.md"`
	Content string `json:"content" jsonschema:"the whole file"`
}

// WriteOutput is write_artifact's result.
type WriteOutput struct {
	Task   string `json:"task"`
	Path   string `json:"path"`
	URI    string `json:"uri"`
	Bytes  int    `json:"bytes"`
	SHA256 string `json:"sha256"`
	Next   Next   `json:"next"`
}

func (s *Server) writeArtifact(ctx context.Context, req *mcp.CallToolRequest, in WriteInput) (*mcp.CallToolResult, WriteOutput, error) {
	if err := s.notInFleet(in.Task, ToolWriteArtifact); err != nil {
		return nil, WriteOutput{}, s.refuse(in.Task, err)
	}
	args := argMap([]string{"content"}, "path", in.Path, "content", in.Content)
	return act(s, ctx, req, ToolWriteArtifact, in.Task, args, func(id string) error {
		return s.write(ctx, id, in.Path, []byte(in.Content))
	}, func(id string, next Next) WriteOutput {
		sum := sha256.Sum256([]byte(in.Content))
		return WriteOutput{Task: id, Path: in.Path, URI: ArtifactURI(id, in.Path), Bytes: len(in.Content),
			SHA256: hex.EncodeToString(sum[:]), Next: next}
	})
}

// write checks data as artifact rel of task id and replaces the file
// durably, under the task's lock, only while the task plans and no
// planning round runs. Invalid content is refused with the message `orch
// next` would give for the file (exit 4) and nothing is written.
func (s *Server) write(ctx context.Context, id, rel string, data []byte) error {
	if !slices.Contains(Writable, rel) {
		return exit.New(exit.ErrUsage, "write_artifact: path: expected one of %s, got %q; reviews, test reports and decisions come from run_phase and the human gates, state.json and the transcript are orch's own", strings.Join(Writable, ", "), rel)
	}
	limit := int64(artifact.MaxJSONBytes)
	if rel == artifact.PlanMarkdownFile {
		limit = maxMarkdownBytes
	}
	if int64(len(data)) > limit {
		return exit.New(exit.ErrInvalid, "%s: expected at most %d bytes, got %d: nothing written", rel, limit, len(data))
	}
	t, err := s.project.Open(id)
	if err != nil {
		return err
	}
	t.Hooks = s.opt.Hooks
	lock, err := t.Lock(ctx, s.opt.Wait)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	if _, err := t.Recover(s.opt.Now().UTC()); err != nil {
		return err
	}
	st, err := t.ReadState()
	if err != nil {
		return err
	}
	if st.Phase != lifecycle.Planning {
		return exit.New(exit.ErrRefused, "task %s is in %s, not planning: %s is written while the task plans (a redo of planning needs a person: `orch redo planning`); nothing written", id, st.Phase, rel)
	}
	if pid, ok := st.Actor(lifecycle.Planning).LivePID(); ok {
		return exit.New(exit.ErrRefused, "a planning round is running for task %s (pid %d): wait for it to finish; nothing written", id, pid)
	}
	if err := checkContent(t.Dir, rel, data); err != nil {
		return err
	}
	dir := filepath.Join(t.Dir, "planning")
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return &exit.Error{Kind: exit.ErrInvalid, Msg: fmt.Sprintf("task %s: planning/ is not a folder: nothing written", id), Err: err}
	}
	// A write killed before its rename left its temporary file; under the
	// lock no write is in progress (answer does the same).
	durable.RemoveTemps(dir, "")
	target := filepath.Join(t.Dir, filepath.FromSlash(rel))
	if fi, err := os.Lstat(target); err == nil && !fi.Mode().IsRegular() {
		return exit.New(exit.ErrInvalid, "%s: expected a regular file, got %s: nothing written", rel, fi.Mode().Type())
	}
	if err := durable.WriteFile(target, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// checkContent validates data as rel with the loaders `orch next` uses,
// on a scratch copy of the task's planning files with data in place: the
// messages are the same, byte for byte.
func checkContent(taskDir, rel string, data []byte) error {
	if rel == artifact.PlanMarkdownFile {
		if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
			return exit.New(exit.ErrInvalid, "%s: expected UTF-8 text without NUL bytes: nothing written", rel)
		}
		return nil
	}
	scratch, err := os.MkdirTemp("", "orch-mcp-check-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if err := os.MkdirAll(filepath.Join(scratch, "planning"), 0o755); err != nil {
		return err
	}
	for _, f := range []string{artifact.PlanFile, artifact.FilePlanFile} {
		var content []byte
		if f == rel {
			content = data
		} else if fr, err := readFile(taskDir, f, 0, artifact.MaxJSONBytes); err == nil {
			content = fr.data
		} else {
			continue
		}
		if err := os.WriteFile(filepath.Join(scratch, filepath.FromSlash(f)), content, 0o644); err != nil {
			return err
		}
	}
	plan := artifact.LoadPlan(scratch)
	if rel == artifact.PlanFile && plan.Err != nil {
		return invalid(plan.Err)
	}
	if rel == artifact.FilePlanFile || !fileExists(filepath.Join(scratch, filepath.FromSlash(artifact.FilePlanFile))) {
		// The file plan is checked against the plan it goes with; when
		// plan.files.json is absent, the plan's file_plan is the file plan.
		if fp := artifact.LoadFilePlan(scratch, plan); fp.Err != nil {
			return invalid(fp.Err)
		}
	}
	return nil
}

// invalid is an artifact error as write_artifact reports it.
func invalid(err error) error {
	return exit.New(exit.ErrInvalid, "%w: nothing written", err)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
