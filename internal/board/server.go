// Package board is `orch serve`: a local web board over one repository's
// .orch/. It shows the tasks in columns by phase, live (server-sent
// events driven by the transcripts), and a page per task with everything
// the gates judged — the plan, the questions, the reviews, the diff, the
// test report, the evidence hashes, the timeline, earlier attempts — and
// the human actions: answer, next, override, redo, accept, revert, and a
// phase's worker. Every action goes through the code the CLI command runs
// (the orchestrator, the worker registry), under the same lock, with the
// same checks and transcript events; its refusal is shown as the CLI
// would print it.
//
// Security: the board binds loopback by default; every request needs the
// token of the printed URL (then a SameSite=Strict, HttpOnly cookie); the
// Host header must be the bound address (DNS rebinding); every state
// change is a POST carrying a CSRF token; text from artifacts and models is
// always escaped (html/template; Markdown without raw HTML); a strict
// Content-Security-Policy allows only the embedded script and style sheet.
package board

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/llm"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/testphase"
	"github.com/orchdev/orch/internal/worker"
)

//go:embed templates/*.tmpl static/*
var assets embed.FS

// Options configure a board.
type Options struct {
	// Project is the repository's .orch/.
	Project *task.Project
	// Addr is the address the board is reached at (host:port): the Host
	// headers it accepts derive from it.
	Addr string
	// Token is the secret of the printed URL; empty means a random one.
	Token string
	// Decider names the person deciding at accept (the CLI's default:
	// git config user.name, else $USER).
	Decider string
	// Getenv reads the environment for the model providers' keys.
	Getenv func(string) string
	// Environ is the base environment of test suites (nil: the process's).
	Environ []string
	// LLMOptions are passed to model providers (tests inject clients).
	LLMOptions []llm.Option
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Poll forces the polling watcher (no file-system notifications).
	Poll bool
	// Fleet is the link to the fleet when [fleet] is configured (nil:
	// none, and nothing of the fleet is asked); FleetErr is why it could
	// not be opened (orch-fleet not found), shown on the board.
	// FleetPoll is how often the fleet's listing is read while a page is
	// open (0: every 2 s). docs/board.md, "The board and the fleet".
	Fleet     *fleetlink.Link
	FleetErr  error
	FleetPoll time.Duration
}

// Server is one board.
type Server struct {
	opt    Options
	orch   *orchestrator.Orchestrator
	guard  *guard
	tmpl   *template.Template
	static map[string][]byte
	watch  *watcher
	jobs   *jobs
	costs  costTails
	// fleet is the fleet's tasks' source (nil without [fleet]).
	fleet  *fleetSource
	states cardStates
	clock  fsClock

	flashMu sync.Mutex
	flashes map[string]flash

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New builds a board; Start begins watching, Close ends it.
func New(opt Options) (*Server, error) {
	if opt.Project == nil {
		return nil, exit.New(exit.ErrInternal, "serve: no project")
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	if opt.Token == "" {
		t, err := newSecret()
		if err != nil {
			return nil, err
		}
		opt.Token = t
	}
	hosts, err := Hosts(opt.Addr)
	if err != nil {
		return nil, fmt.Errorf("serve: address %q: %w", opt.Addr, err)
	}
	_, port, _ := net.SplitHostPort(opt.Addr)
	tmpl, err := template.New("").Funcs(funcs).ParseFS(assets, "templates/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("serve: templates: %w", err)
	}
	s := &Server{opt: opt, orch: orchestrator.New(opt.Project), guard: newGuard(opt.Token, hosts, port), tmpl: tmpl,
		static: map[string][]byte{}, watch: newWatcher(opt.Project.TasksDir()), jobs: newJobs(), flashes: map[string]flash{}}
	s.orch.Now = opt.Now
	if opt.Fleet != nil || opt.FleetErr != nil {
		s.fleet = newFleetSource(opt.Fleet, opt.FleetErr, opt.FleetPoll, s.watch.publish)
	}
	s.clock.path = filepath.Join(opt.Project.Dir, "cache", "board.clock")
	s.states.path = filepath.Join(opt.Project.Dir, filepath.FromSlash(cardsFile))
	s.states.saveEvery = cardsSaveEvery
	s.watch.forcePoll = opt.Poll
	err = fs.WalkDir(assets, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		s.static[path.Base(p)] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// Start begins watching the tasks.
func (s *Server) Start() {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.watch.run(s.ctx)
	}()
	if s.fleet != nil && s.fleet.broken == nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.pollFleet(s.ctx)
		}()
	}
}

// Close stops the watcher and cancels running jobs, waiting for them.
func (s *Server) Close() {
	s.jobs.cancelAll()
	s.cancel()
	s.wg.Wait()
	s.clock.close()
	s.states.flush()
}

// Token is the secret of the board's URL.
func (s *Server) Token() string { return s.opt.Token }

// URL is the address to open: the board with its token.
func (s *Server) URL() string {
	return "http://" + s.opt.Addr + "/?" + tokenParam + "=" + url.QueryEscape(s.opt.Token)
}

// WatchMode says how changes are noticed ("notify", "poll"; "" before
// Start has looked).
func (s *Server) WatchMode() string { return s.watch.Mode() }

// Ready is closed once the board watches the tasks.
func (s *Server) Ready() <-chan struct{} { return s.watch.ready }

// Handler is the board's HTTP handler, with its access control.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", s.handleBoard)
	mux.HandleFunc("GET /events", s.handleEvents)
	mux.HandleFunc("GET /static/{name}", s.handleStatic)
	mux.HandleFunc("GET /task/{id}", s.handleTask)
	mux.HandleFunc("GET /task/{id}/file", s.handleFile)
	mux.HandleFunc("GET /task/{id}/job", s.handleJob)
	mux.HandleFunc("POST /task/{id}/answer", s.handleAnswer)
	mux.HandleFunc("POST /task/{id}/next", s.handleNext)
	mux.HandleFunc("POST /task/{id}/override", s.handleOverride)
	mux.HandleFunc("POST /task/{id}/redo", s.handleRedo)
	mux.HandleFunc("POST /task/{id}/accept", s.handleAccept)
	mux.HandleFunc("POST /task/{id}/revert", s.handleRevert)
	mux.HandleFunc("POST /task/{id}/work", s.handleWork)
	mux.HandleFunc("POST /task/{id}/cancel", s.handleCancel)
	return s.guard.wrap(mux)
}

func (s *Server) now() time.Time { return s.opt.Now() }

// workers is the one registry of phase workers, as the CLI builds it.
func (s *Server) workers() worker.Set { return worker.Registry(worker.Deps{}) }

// page is what every template gets.
type page struct {
	Title   string
	CSRF    string
	Project string
	Task    string // the task the page is about ("" on the board)
	Flash   *flash
	Board   []Column
	T       *TaskPage
	F       *FleetPage // a fleet task's page
	Nav     []NavTask  // the tasks, on the page of a task that is not there
	Missing string     // the task id asked for that is not there
	// Notice is said above the board (the fleet did not answer).
	Notice string
	Watch  string
	// Stamp is the watcher's generation when the page was read: the
	// page's script reloads it when the events stream says it is older.
	Stamp int64
}

// Kept is what was typed into field of form before the form was refused
// (flash.Kept), to fill it in again; "" for any other form.
func (p page) Kept(form, field string) string {
	if p.Flash == nil || p.Flash.OK || p.Flash.Form != form {
		return ""
	}
	return p.Flash.Kept[field]
}

// KeptAnswer is the refused answer to question q.
func (p page) KeptAnswer(q string) string {
	if p.Kept("answer", "question") != q {
		return ""
	}
	return p.Kept("answer", "answer")
}

func (s *Server) render(w http.ResponseWriter, name string, p page) {
	s.renderStatus(w, name, p, http.StatusOK)
}

// renderStatus renders a page with an HTTP status.
func (s *Server) renderStatus(w http.ResponseWriter, name string, p page, status int) {
	p.CSRF = s.guard.csrf
	p.Project = s.opt.Project.Root
	p.Watch = s.watch.Mode()
	var b strings.Builder
	if err := s.tmpl.ExecuteTemplate(&b, name, p); err != nil {
		refuse(w, http.StatusInternalServerError, "orch serve: render "+name+": "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, b.String())
}

func (s *Server) handleBoard(w http.ResponseWriter, r *http.Request) {
	stamp := s.watch.Gen()
	cols, err := s.boardColumns()
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	cols, notice := s.withFleet(r.Context(), cols)
	s.render(w, "board.tmpl", page{Title: "orch board", Board: cols, Stamp: stamp, Notice: notice})
}

func (s *Server) handleTask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if task.ValidID(id) != nil {
		s.missing(w, id)
		return
	}
	if s.fleetOwns(id) {
		s.handleFleetTask(w, r, id)
		return
	}
	if _, err := os.Stat(path.Join(s.opt.Project.TasksDir(), id)); err != nil {
		s.missing(w, id)
		return
	}
	stamp := s.watch.Gen()
	tp, err := s.taskPage(r.Context(), id)
	if err != nil {
		refuse(w, http.StatusInternalServerError, err.Error())
		return
	}
	p := page{Title: tp.Title + " · orch", Task: id, T: tp, Stamp: stamp}
	if f, ok := s.takeFlash(r.URL.Query().Get("flash")); ok && f.Task == id && !(f.Started && tp.Job != nil && !tp.Job.Running()) {
		p.Flash = &f
	}
	s.render(w, "task.tmpl", p)
}

// missing answers the page of a task that is not there (a mistyped
// address, a removed folder): 404, with the board's header, the tasks
// there are and the way back, instead of a line of plain text.
func (s *Server) missing(w http.ResponseWriter, id string) {
	s.renderStatus(w, "missing.tmpl", page{Title: "no task · orch", Missing: id, Nav: s.navTasks(), Stamp: s.watch.Gen()}, http.StatusNotFound)
}

// handleStatic serves the embedded script and style sheets.
func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	b, ok := s.static[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	switch path.Ext(name) {
	case ".css":
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
	case ".js":
		w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
	case ".svg":
		w.Header().Set("Content-Type", "image/svg+xml")
	}
	w.Write(b)
}

// handleFile shows one file of the task folder as plain text (history/
// attempts, logs, any artifact): never as HTML, never outside the folder.
func (s *Server) handleFile(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rel := r.URL.Query().Get("path")
	if task.ValidID(id) != nil || rel == "" || path.IsAbs(rel) || strings.Contains(rel, "\\") || path.Clean(rel) != rel || strings.HasPrefix(rel, "..") {
		refuse(w, http.StatusBadRequest, "orch serve: a task file is named by its path inside the task folder")
		return
	}
	b, err := readTaskFile(path.Join(s.opt.Project.TasksDir(), id), rel, 8<<20)
	if err != nil {
		refuse(w, http.StatusNotFound, "orch serve: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; sandbox")
	w.Write(b)
}

// handleJob answers a job's state as JSON (the page's fallback when
// events are not available).
func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	j := s.jobs.get(r.PathValue("id"), r.URL.Query().Get("job"))
	if j == nil {
		refuse(w, http.StatusNotFound, "orch serve: no such job")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(j.State(0))
}

// handleEvents streams server-sent events: "change" with the ids of the
// tasks whose transcript or state changed, and, with ?task=ID, "job" with
// the progress of that task's jobs. The page reloads what changed.
//
// Event schema (data is one JSON object):
//
//	event: hello    data: {"stamp": 7}   (first: the changes published so far)
//	event: change   data: {"tasks": ["0001-add-reverse", …], "stamp": 8}
//	event: job      data: JobState (id, task, action, lines, from, tokens, done, error, code, result, elapsed)
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		refuse(w, http.StatusInternalServerError, "orch serve: streaming is not supported")
		return
	}
	only := r.URL.Query().Get("task")
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	sub, cancel := s.watch.subscribe()
	defer cancel()
	send := func(kind string, v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", kind, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	// The retry hint and a first comment open the stream at once.
	fmt.Fprint(w, "retry: 1000\n: orch board\n\n")
	if !send("hello", map[string]any{"stamp": s.watch.Gen()}) {
		return
	}
	var jobID string
	sent := 0
	jobNews := func() bool {
		if only == "" {
			return true
		}
		j := s.jobs.last(only)
		if j == nil {
			return true
		}
		if j.ID != jobID {
			jobID, sent = j.ID, 0
		}
		st := j.State(sent)
		if len(st.Lines) == 0 && sent > 0 && !st.Done {
			// Only the token count moved.
			st.Lines = nil
		}
		sent = st.From + len(st.Lines)
		return send("job", st)
	}
	if only != "" && s.jobs.last(only) != nil && !jobNews() {
		return
	}
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		jw := s.jobs.waiter()
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-sub.wake:
			ids := sub.take()
			if only != "" && !slices.Contains(ids, only) {
				continue
			}
			if !send("change", map[string]any{"tasks": ids, "stamp": s.watch.Gen()}) {
				return
			}
		case <-jw:
			if !jobNews() {
				return
			}
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}

// runtime builds the agents' runtime for a job, as the CLI does.
func (s *Server) runtime(cfg config.Config, j *Job) *agent.Runtime {
	rt := agent.NewRuntime(s.opt.Project, cfg, s.opt.Getenv)
	rt.Now = s.opt.Now
	rt.Options = s.opt.LLMOptions
	rt.OnTool = j.tool
	rt.OnToken = j.token
	return rt
}

// testOptions are the test phase's options for a job: the configured
// sandbox, the suites' output streamed to the job.
func (s *Server) testOptions(j *Job) testphase.Options {
	return testphase.Options{Stream: j, Env: s.opt.Environ}
}
