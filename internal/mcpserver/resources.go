package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/task"
)

// uriPrefix starts every resource URI: orch://task/<id>/<path>.
const uriPrefix = "orch://task/"

// uriTemplate is the resource template (RFC 6570; {+path} keeps its
// slashes).
const uriTemplate = "orch://task/{id}/{+path}"

// maxURIBytes bounds a resource URI.
const maxURIBytes = 8 << 10

// ArtifactURI is the resource URI of task id's artifact rel: each path
// element percent-encoded as a URI path segment.
func ArtifactURI(id, rel string) string {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return uriPrefix + id + "/" + strings.Join(parts, "/")
}

// ParseURI splits a resource URI into the task id and the task-relative
// artifact path, refusing anything ArtifactURI would not produce for a
// readable artifact: a bad id, an escaping or unsafe path, a path outside
// the artifact areas.
func ParseURI(uri string) (id, rel string, err error) {
	bad := func(why string) error {
		return exit.New(exit.ErrUsage, "resource %q: %s; expected %s<task id>/<path in planning/, review/, code/, test/, accept/ or revert/>", clipURI(uri), why, uriPrefix)
	}
	if len(uri) > maxURIBytes {
		return "", "", bad(fmt.Sprintf("longer than %d bytes", maxURIBytes))
	}
	rest, ok := strings.CutPrefix(uri, uriPrefix)
	if !ok {
		return "", "", bad("not an orch task URI")
	}
	id, escaped, ok := strings.Cut(rest, "/")
	if !ok {
		return "", "", bad("no artifact path")
	}
	if err := task.ValidID(id); err != nil {
		return "", "", bad("the task id is invalid")
	}
	parts := strings.Split(escaped, "/")
	for i, p := range parts {
		u, err := url.PathUnescape(p)
		if err != nil {
			return "", "", bad("a path element is not percent-encoded correctly")
		}
		if strings.Contains(u, "/") {
			return "", "", bad("a path element holds an encoded slash")
		}
		parts[i] = u
	}
	rel = strings.Join(parts, "/")
	if err := CheckArtifactPath(rel); err != nil {
		return "", "", bad(err.Error())
	}
	return id, rel, nil
}

// CheckArtifactPath accepts a task-relative path to a file of the
// artifact areas: relative, '/'-separated, UTF-8, no empty, "." or ".."
// element, no NUL or backslash, under one of lifecycle.ArtifactAreas.
func CheckArtifactPath(rel string) error {
	bad := func(why string) error {
		return exit.New(exit.ErrUsage, "path %q: %s", clipURI(rel), why)
	}
	switch {
	case rel == "":
		return bad("empty")
	case !utf8.ValidString(rel):
		return bad("not valid UTF-8")
	case strings.ContainsAny(rel, "\x00\\"):
		return bad("holds a NUL byte or a backslash")
	case len(rel) > 4096:
		return bad("longer than 4096 bytes")
	}
	parts := strings.Split(rel, "/")
	for _, p := range parts {
		if p == "" || p == "." || p == ".." {
			return bad("has an empty, \".\" or \"..\" element")
		}
	}
	if len(parts) < 2 || !slices.Contains(lifecycle.ArtifactAreas(), parts[0]) {
		return bad(fmt.Sprintf("not a file under %s/", strings.Join(lifecycle.ArtifactAreas(), "/, ")))
	}
	return nil
}

func clipURI(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// readResource serves resources/read for an artifact URI.
func (s *Server) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, rel, err := ParseURI(uri)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	t, err := s.project.Open(id)
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	f, err := readFile(t.Dir, rel, 0, maxReadBytes)
	if errors.Is(err, artifact.ErrNotRegular) {
		// Say what is there instead (a named pipe, a symbolic link, …).
		return nil, fmt.Errorf("%s: %w", uri, err)
	}
	if err != nil {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeOf(rel)}
	if utf8.Valid(f.data) {
		c.Text = string(f.data)
		if f.truncated {
			c.Text += fmt.Sprintf("\n[orch: truncated at %d of %d bytes; read_artifact pages through it]\n", len(f.data), f.size)
		}
	} else {
		c.Blob = f.data
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// mimeOf guesses a MIME type from the extension (text/plain otherwise).
func mimeOf(rel string) string {
	switch path.Ext(rel) {
	case ".json":
		return "application/json"
	case ".jsonl":
		return "application/jsonl"
	case ".md":
		return "text/markdown"
	case ".patch", ".diff":
		return "text/x-diff"
	}
	if m := mime.TypeByExtension(path.Ext(rel)); m != "" {
		return m
	}
	return "text/plain"
}

// stamp identifies a version of a file well enough to notice a change.
type stamp struct {
	size  int64
	mtime time.Time
}

// watcher keeps the server's resource list equal to the artifacts on
// disk and notifies subscribers when one changes.
type watcher struct {
	s      *Server
	mu     sync.Mutex
	stamps map[string]stamp // URI → last seen
}

func newWatcher(s *Server) *watcher { return &watcher{s: s, stamps: map[string]stamp{}} }

// loop scans every interval until ctx is done.
func (w *watcher) loop(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			w.scan(ctx)
		}
	}
}

// scan compares the artifacts with what was seen: new files become
// resources, vanished ones are removed, changed ones are announced to
// their subscribers (notifications/resources/updated).
func (w *watcher) scan(ctx context.Context) {
	now := w.snapshot()
	w.mu.Lock()
	var added, removed, changed []string
	for uri, st := range now {
		old, ok := w.stamps[uri]
		switch {
		case !ok:
			added = append(added, uri)
		case old != st:
			changed = append(changed, uri)
		}
	}
	for uri := range w.stamps {
		if _, ok := now[uri]; !ok {
			removed = append(removed, uri)
		}
	}
	w.stamps = now
	w.mu.Unlock()
	sort.Strings(added)
	for _, uri := range added {
		id, rel, _ := ParseURI(uri)
		w.s.mcp.AddResource(&mcp.Resource{URI: uri, Name: id + "/" + rel, Title: rel + " of task " + id, MIMEType: mimeOf(rel)}, w.s.readResource)
	}
	if len(removed) > 0 {
		w.s.mcp.RemoveResources(removed...)
	}
	sort.Strings(changed)
	// A file that appears or vanishes is a change of it too.
	for _, uri := range append(append(changed, added...), removed...) {
		_ = w.s.mcp.ResourceUpdated(context.WithoutCancel(ctx), &mcp.ResourceUpdatedNotificationParams{URI: uri})
	}
}

// snapshot stamps every artifact file of every task.
func (w *watcher) snapshot() map[string]stamp {
	out := map[string]stamp{}
	tasksDir := w.s.project.TasksDir()
	entries, err := os.ReadDir(tasksDir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		if !e.IsDir() || task.ValidID(e.Name()) != nil {
			continue
		}
		dir := filepath.Join(tasksDir, e.Name())
		for _, area := range lifecycle.ArtifactAreas() {
			top := filepath.Join(dir, area)
			_ = filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return nil
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return nil
				}
				rel = filepath.ToSlash(rel)
				if CheckArtifactPath(rel) != nil || strings.Contains(rel, "/.") {
					return nil
				}
				fi, err := d.Info()
				if err != nil {
					return nil
				}
				out[ArtifactURI(e.Name(), rel)] = stamp{size: fi.Size(), mtime: fi.ModTime()}
				return nil
			})
		}
	}
	return out
}
