package board

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/landing"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/nextstep"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
	"github.com/orchdev/orch/internal/view"
)

// Column is one phase of the board with its tasks.
type Column struct {
	Phase lifecycle.Phase
	Cards []Card
}

// Card is one task on the board.
type Card struct {
	ID      string
	Title   string
	Phase   lifecycle.Phase
	Age     string // since the task was created
	InPhase string // since the task entered its phase (the transcript)
	Current bool   // the project's current task (.orch/current)
	Cost    string // the model calls' cost, "" when none was made
	Tokens  int64
	Waits   string // what moves it on, in a few words
	Why     string // the longer reason
	Running bool
	Human   bool   // the next step is a person's (an answer, a decision)
	Err     string // the task could not be read
	Fleet   bool   // the fleet's task (docs/board.md, "The board and the fleet")
	// Reverted marks a done task whose change a revert undid: done
	// alone read the same as an accepted one.
	Reverted bool
}

// boardColumns reads every task into the phase columns, in lifecycle
// order.
func (s *Server) boardColumns() ([]Column, error) {
	ids, err := s.orch.Project.Folders()
	if err != nil {
		return nil, err
	}
	cols := make([]Column, 0, 8)
	idx := map[lifecycle.Phase]int{}
	for _, p := range lifecycle.Phases() {
		idx[p] = len(cols)
		cols = append(cols, Column{Phase: p})
	}
	cur, _ := s.orch.Project.Current()
	// The file system's time before any card is read: the cards' cache
	// trusts only what was not changed since (cardcache.go).
	since, stamped := s.clock.now()
	for _, id := range ids {
		c := s.cardAt(task.Summary{ID: id}, since, stamped)
		c.Current = id == cur
		i, ok := idx[c.Phase]
		if !ok {
			i = 0
		}
		cols[i].Cards = append(cols[i].Cards, c)
	}
	// The cards' cache file: what the next start's first page reads.
	s.states.save()
	for _, col := range cols {
		// The most recently changed first.
		slices.SortStableFunc(col.Cards, func(a, b Card) int { return strings.Compare(a.ID, b.ID) })
	}
	return cols, nil
}

// card summarizes one task.
func (s *Server) card(sum task.Summary) Card {
	since, stamped := s.clock.now()
	return s.cardAt(sum, since, stamped)
}

// cardAt is card, reading the task's committed state through the cards'
// cache with since, the file system's time before the card was read
// (stamped false: none). A sum without a phase is a task folder of the
// board's listing: the card is in the phase the task committed, as
// `orch list` lists it, and a task whose state.json cannot be read is
// shown with the error in planning.
func (s *Server) cardAt(sum task.Summary, since int64, stamped bool) Card {
	c := Card{ID: sum.ID, Phase: sum.Phase, Title: sum.ID}
	if err := task.ValidID(sum.ID); err != nil && sum.Err == "" {
		sum.Err = err.Error()
	}
	if sum.Err != "" {
		c.Err = sum.Err
		c.Phase = lifecycle.Planning
		return c
	}
	t, err := s.orch.Project.Open(sum.ID)
	if err != nil {
		c.Err = err.Error()
		return c
	}
	cm := s.states.committed(t, since, stamped, &s.costs)
	st, pending, stErr := cm.st, cm.pending, cm.err
	if sum.Phase == "" {
		var disagree *task.DisagreeError
		if stErr != nil && !errors.As(stErr, &disagree) {
			c.Err = stErr.Error()
			c.Phase = lifecycle.Planning
			return c
		}
		// The transcript's state, also when state.json disagrees.
		c.Phase = st.Phase
	}
	// The task's observation cache (docs/artifacts.md): the plan is loaded
	// through it once, for the title and the decision.
	obs := evidence.OpenCache(s.orch.Project.Dir, t.Dir, t.ID)
	defer obs.Save()
	plan := obs.LoadPlan(t.Dir)
	c.Title = taskTitle(t, plan)
	now := s.now()
	if stErr == nil {
		c.Age = ago(now.Sub(st.CreatedAt))
		c.InPhase = ago(now.Sub(st.UpdatedAt))
	}
	// The transcript's tail: what was appended since the last refresh.
	tr, err := cm.tail, cm.tailErr
	if tr == nil {
		var r tailRead
		r, err = s.costs.read(t, cm, false)
		tr = &r
	}
	if err == nil {
		costs, entered := tr.sum, tr.entered
		// The gates' records the decision folds: from the same reading.
		obs.UseRecords(tr.gates, tr.gateErr)
		if stErr == nil && cm.logOK && tr.since != 0 && tr.gateErr == nil {
			// Both readings began by then: the entry is trusted only
			// for files changed before the earlier one.
			s.states.remember(t.ID, &diskCard{State: cm.state, Log: cm.log, Since: min(cm.read, tr.since),
				St: cm.shared, Pending: pending, Cost: costs, Entered: entered, Gates: tr.gates})
		}
		// In phase since it was entered, not since the last change.
		if entered.Phase == c.Phase && !entered.Start.IsZero() {
			c.InPhase = ago(entered.Took(now))
		}
		total := costs.Total
		c.Tokens = total.TokensIn + total.TokensOut
		if total.Calls > 0 {
			c.Cost = agent.FormatUSD(total.CostUSD)
		}
	}
	// What orch status decides, from the task's observation cache
	// (docs/artifacts.md): the same step as `orch status` names. The
	// card shows no budget warnings and no commit, so it reads neither.
	if stErr != nil {
		c.Err = stErr.Error()
		return c
	}
	v := orchestrator.StatusView{Task: t.ID, Phase: st.Phase, Revision: st.Revision, UpdatedAt: st.UpdatedAt, Actors: st.Actors, Pending: pending}
	if v.Actors == nil {
		v.Actors = task.Actors{}
	}
	a := st.Actor(st.Phase)
	if _, live := a.LivePID(); pending == nil && (a.Status != lifecycle.StatusRunning || !live) {
		// An interrupted commit or a running phase is all the step
		// says (nextstep.For): only otherwise is the decision made.
		if v, err = s.orch.StatusCached(obs, t, st, pending); err != nil {
			c.Err = err.Error()
			return c
		}
	}
	step := nextstep.For(v, nextstep.OpenQuestionOf(plan, v.Phase))
	c.Waits, c.Human = nextstep.Waits(step, v) // the words orch list uses
	c.Why = step.Why
	if v.Phase == lifecycle.Done {
		// One small file, only for done tasks (revert/record.json).
		if r := artifact.LoadRevertRecord(t.Dir); r.OK() && r.Value.Status == artifact.RevertReverted {
			c.Reverted, c.Waits = true, "done: reverted"
		}
	}
	if a, ok := v.Actors[v.Phase]; ok && a.Status == lifecycle.StatusRunning {
		_, c.Running = a.LivePID()
	}
	return c
}

// taskTitle is the plan's title, else the brief's first line.
func taskTitle(t *task.Task, p artifact.Loaded[artifact.Plan]) string {
	if p.OK() && strings.TrimSpace(p.Value.Title) != "" {
		return p.Value.Title
	}
	if b, err := readTaskFile(t.Dir, artifact.BriefFile, 4096); err == nil {
		line, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		if line = strings.TrimSpace(strings.TrimLeft(line, "# ")); line != "" {
			return clip.Runes(line, 120)
		}
	}
	return t.ID
}

// ago renders a duration the way a board does: 4s, 3m, 2h, 5d.
func ago(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// readTaskFile reads a regular file below the task folder (never through
// a symlink out of it), at most limit bytes.
func readTaskFile(taskDir, rel string, limit int64) ([]byte, error) {
	b, _, err := readTaskPart(taskDir, rel, limit, false)
	return b, err
}

// readTail reads at most limit bytes of the end of a task file, and
// whether it cut something off.
func readTail(taskDir, rel string, limit int64) ([]byte, bool, error) {
	return readTaskPart(taskDir, rel, limit, true)
}

// readTaskPart reads the start (or, with tail, the end) of a regular file
// below the task folder (artifact.OpenRegular: never a symbolic link, a
// named pipe or a device, and never blocking on one).
func readTaskPart(taskDir, rel string, limit int64, tail bool) ([]byte, bool, error) {
	f, fi, err := artifact.OpenRegular(taskDir, rel)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	cut := fi.Size() > limit
	if cut && tail {
		if _, err := f.Seek(fi.Size()-limit, io.SeekStart); err != nil {
			return nil, false, err
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, limit))
	return b, cut, err
}

// TaskPage is everything the task page shows.
type TaskPage struct {
	Card
	Revision   int64
	Created    time.Time
	Updated    time.Time
	Status     orchestrator.StatusView
	Step       nextstep.Step
	Diagram    template.HTML
	Mermaid    string
	Timeline   []Entry
	Brief      template.HTML
	Plan       PlanView
	PlanReview ReviewView
	CodeReview CodeReviewView
	Diff       DiffView
	Tests      TestView
	Evidence   []Hash
	Accept     landing.Evidence
	Decision   *landing.Decision
	Revert     *artifact.RevertRecord
	History    []Attempt
	CostPhases []agent.PhaseCost
	CostTotal  agent.CostLine
	// Actions the page offers, by the phase and state.
	CanAnswer  bool
	CanNext    bool
	CanAccept  bool
	CanRevert  bool
	RevertDone bool   // the revert form re-opens the done task first
	Work       string // the phase worker's command ("" when none)
	OverrideTo []lifecycle.Phase
	Forward    lifecycle.Phase // where an override without --to goes ("" none)
	RedoTo     []lifecycle.Phase
	Targets    []string // changes_requested targets
	Job        *Job     // the task's last job started from this board
	// Commit is, in done, orch's commit of the change (view.Status).
	Commit string
	// Stays are the phases the task went through, with their durations.
	Stays []Stay
	// Tasks are every task of the project, for the page's task list.
	Tasks []NavTask
	// The sections that have something to show (the table of contents
	// links only to those).
	HasEvidence bool
	HasHistory  bool
	Invalid     []string
	PendingNote string
	// PlanOpen unfolds the plan's Markdown while the plan is what is
	// being worked on or judged.
	PlanOpen bool
}

// PlanView is the plan: its Markdown rendered, the questions and the
// file plan.
type PlanView struct {
	Present   bool
	Err       string
	Title     string
	Markdown  template.HTML
	Questions []artifact.Question
	Files     []artifact.FileEntry
	Open      int
}

// ReviewView is the plan review: the aggregated verdict and each
// persona's.
type ReviewView struct {
	Present   bool
	Err       string
	OK        bool
	Blocked   bool
	Reviewers []ReviewerView
	Markdown  template.HTML
}

// ReviewerView is one persona's verdict.
type ReviewerView struct {
	ID             string
	OK             bool
	Severity       string
	Decision       string
	Summary        string
	BlockingIssues []string
	Suggestions    []string
}

// CodeReviewView is the code review.
type CodeReviewView struct {
	Present   bool
	Err       string
	OK        bool
	Issues    []artifact.Issue
	Reviewers []ReviewerView
	Markdown  template.HTML
}

// TestView is the test report with the failing tests and the logs.
type TestView struct {
	Present bool
	Err     string
	Report  artifact.TestReport
	Suites  []SuiteView
	Notes   []string
	Sandbox string
}

// SuiteView is one suite: its failing cases and its log's tail.
type SuiteView struct {
	artifact.Suite
	Failing []artifact.Case
	LogText string
	LogCut  bool
}

// Hash is one evidence record: what a gate bound and what the file holds
// now.
type Hash struct {
	Key   string
	File  string
	Bound string
	Gate  string
	Seq   int64
	Now   string
	Match bool
}

// Attempt is one folder of history/.
type Attempt struct {
	Name  string
	Files []FileRef
}

// FileRef is a file of an attempt.
type FileRef struct {
	Path string // task-relative
	Size int64
}

// taskPage gathers the task page of task id.
func (s *Server) taskPage(ctx context.Context, id string) (*TaskPage, error) {
	if err := task.ValidID(id); err != nil {
		return nil, err
	}
	t, err := s.orch.Project.Open(id)
	if err != nil {
		return nil, err
	}
	vs, step, err := view.StatusOf(s.orch, id)
	if err != nil {
		return nil, err
	}
	v := vs.StatusView
	sum := task.Summary{ID: id, Phase: v.Phase, Revision: v.Revision, UpdatedAt: v.UpdatedAt}
	pg := &TaskPage{Card: s.card(sum), Status: v, Step: step, Revision: v.Revision, Updated: v.UpdatedAt, Invalid: v.Invalid, Commit: vs.Commit}
	if st, _, err := t.CommittedState(); err == nil {
		pg.Created = st.CreatedAt
	}
	if v.Pending != nil {
		pg.PendingNote = v.Pending.String()
	}
	pg.Diagram = diagramSVG(s.orch.Table, v.Phase, v.Suggested)
	pg.Mermaid = s.orch.Table.Mermaid()
	if b, err := readTaskFile(t.Dir, artifact.BriefFile, 256<<10); err == nil {
		pg.Brief = markdown(b)
	}
	evs, err := t.Transcript()
	if err == nil {
		pg.Timeline = timeline(evs)
		pg.Stays = stays(phaseSpans(evs), s.now())
		cs := agent.SumCosts(task.ModelCalls(evs))
		pg.CostPhases, pg.CostTotal = cs.Phases, cs.Total
	}
	pg.Plan = planView(t.Dir)
	pg.PlanOpen = v.Phase == lifecycle.Planning || v.Phase == lifecycle.PlanReview
	pg.PlanReview = planReviewView(t.Dir)
	pg.CodeReview = codeReviewView(t.Dir)
	pg.Diff = loadDiffView(t.Dir)
	pg.Tests = testView(t.Dir)
	pg.Evidence = hashes(t.Dir)
	pg.Accept = landing.GatherEvidence(t.Dir)
	if b, err := readTaskFile(t.Dir, artifact.DecisionFile, 1<<20); err == nil {
		var d landing.Decision
		if json.Unmarshal(b, &d) == nil {
			pg.Decision = &d
		}
	}
	if r := artifact.LoadRevertRecord(t.Dir); r.OK() {
		pg.Revert = &r.Value
	}
	pg.History = history(t.Dir)
	pg.Job = s.jobs.last(id)
	pg.HasEvidence = pg.Decision != nil || pg.Revert != nil
	for _, h := range pg.Evidence {
		pg.HasEvidence = pg.HasEvidence || h.Bound != ""
	}
	pg.HasHistory = len(pg.History) > 0
	pg.Tasks = s.navTasks()

	// The actions, as the CLI would allow them; the CLI's code decides
	// anyway and its refusal is shown.
	running := pg.Running
	phase := v.Phase
	pg.CanAnswer = phase == lifecycle.Planning && !running
	pg.CanNext = !phase.Terminal() && !running
	pg.CanAccept = phase == lifecycle.Accept && !running
	pg.CanRevert = phase == lifecycle.Revert && !running
	// A done task whose change orch committed, and that no revert undid
	// yet, can be reverted in one step, as `orch revert` does from done:
	// re-opened at revert (a redo with the reason), then reverted.
	if phase == lifecycle.Done && !running && v.Pending == nil && pg.Decision != nil &&
		pg.Decision.Verdict == artifact.VerdictAccepted && pg.Decision.Commit != "" &&
		(pg.Revert == nil || pg.Revert.Status != artifact.RevertReverted) {
		pg.CanRevert, pg.RevertDone = true, true
	}
	if w, ok := s.workers().For(phase); ok && phase != lifecycle.Accept && phase != lifecycle.Revert && !running {
		pg.Work = w.Command()
	}
	pg.OverrideTo, pg.RedoTo = gateTargets(s.orch.Table, phase)
	if e, ok := s.orch.Table.Forward(phase); ok {
		pg.Forward = e.To
	}
	pg.Targets = []string{"codegen", "review", "planning"}
	return pg, nil
}

// NavTask is a task in the task page's list of tasks.
type NavTask struct {
	ID      string
	Phase   lifecycle.Phase
	Current bool // the project's current task (.orch/current)
	Fleet   bool // the fleet's task
}

// navTasks lists the project's tasks for the task page's list (nil when
// they cannot be listed: the page shows without it).
func (s *Server) navTasks() []NavTask {
	list, err := s.orch.Project.List()
	if err != nil {
		return nil
	}
	cur, _ := s.orch.Project.Current()
	out := make([]NavTask, 0, len(list))
	for _, sum := range list {
		out = append(out, NavTask{ID: sum.ID, Phase: sum.Phase, Current: sum.ID == cur})
	}
	return out
}

// planView reads the plan.
func planView(dir string) PlanView {
	var pv PlanView
	p := artifact.LoadPlan(dir)
	pv.Present = p.Present
	if p.Err != nil {
		pv.Err = p.Err.Error()
	}
	if p.OK() {
		pv.Title = p.Value.Title
		pv.Questions = p.Value.Questions
		pv.Open = len(p.Value.OpenQuestions())
	}
	if fp := artifact.LoadFilePlan(dir, p); fp.OK() {
		pv.Files = fp.Value.Files
	}
	if b, err := readTaskFile(dir, artifact.PlanMarkdownFile, 1<<20); err == nil {
		pv.Markdown = markdown(b)
		pv.Present = true
	}
	return pv
}

// rawText renders a JSON value for reading: a string as itself, anything
// else as compact JSON.
func rawText(m json.RawMessage) string {
	if len(m) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, m) == nil {
		return b.String()
	}
	return string(m)
}

func rawTexts(ms []json.RawMessage) []string {
	out := make([]string, 0, len(ms))
	for _, m := range ms {
		if t := rawText(m); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// reviewerExtra is a plan reviewer with the "summary" it may carry beside
// the contract's fields.
type reviewerExtra struct {
	artifact.Reviewer
	Summary json.RawMessage `json:"summary"`
}

func reviewerViews(raw []byte) []ReviewerView {
	var doc struct {
		Reviewers []reviewerExtra `json:"reviewers"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	out := make([]ReviewerView, 0, len(doc.Reviewers))
	for _, r := range doc.Reviewers {
		out = append(out, ReviewerView{ID: r.ID, OK: r.OK, Severity: r.Severity, Decision: rawText(r.Decision), Summary: rawText(r.Summary),
			BlockingIssues: rawTexts(r.BlockingIssues), Suggestions: rawTexts(r.Suggestions)})
	}
	return out
}

func planReviewView(dir string) ReviewView {
	var rv ReviewView
	r := artifact.LoadPlanReview(dir)
	rv.Present = r.Present
	if r.Err != nil {
		rv.Err = r.Err.Error()
	}
	if r.OK() {
		rv.OK, rv.Blocked = r.Value.OK, r.Value.Blocked
		if b, err := readTaskFile(dir, artifact.PlanReviewFile, 4<<20); err == nil {
			rv.Reviewers = reviewerViews(b)
		}
	}
	if b, err := readTaskFile(dir, artifact.PlanReviewMarkdownFile, 1<<20); err == nil {
		rv.Markdown = markdown(b)
	}
	return rv
}

func codeReviewView(dir string) CodeReviewView {
	var cv CodeReviewView
	r := artifact.LoadCodeReview(dir)
	cv.Present = r.Present
	if r.Err != nil {
		cv.Err = r.Err.Error()
	}
	if r.OK() {
		cv.OK, cv.Issues = r.Value.OK, r.Value.Issues
		slices.SortStableFunc(cv.Issues, func(a, b artifact.Issue) int { return severityRank(b.Severity) - severityRank(a.Severity) })
		if b, err := readTaskFile(dir, artifact.CodeReviewFile, 4<<20); err == nil {
			cv.Reviewers = reviewerViews(b)
		}
	}
	if b, err := readTaskFile(dir, artifact.CodeReviewMarkdownFile, 1<<20); err == nil {
		cv.Markdown = markdown(b)
	}
	return cv
}

func severityRank(s string) int {
	return map[string]int{artifact.SeverityInfo: 1, artifact.SeverityMinor: 2, artifact.SeverityMajor: 3, artifact.SeverityBlocking: 4}[s]
}

// maxLog is how much of a suite's log the page shows (its end).
const maxLog = 64 << 10

func testView(dir string) TestView {
	var tv TestView
	r := artifact.LoadTestReport(dir)
	tv.Present = r.Present
	if r.Err != nil {
		tv.Err = r.Err.Error()
	}
	if !r.OK() {
		return tv
	}
	tv.Report = r.Value
	if b, err := readTaskFile(dir, artifact.TestReportFile, 64<<20); err == nil {
		var extra struct {
			Sandbox string   `json:"sandbox"`
			Notes   []string `json:"notes"`
		}
		if json.Unmarshal(b, &extra) == nil {
			tv.Sandbox, tv.Notes = extra.Sandbox, extra.Notes
		}
	}
	for _, su := range r.Value.Suites {
		sv := SuiteView{Suite: su}
		for _, c := range su.Cases {
			if c.Status == "fail" || c.Status == "error" {
				sv.Failing = append(sv.Failing, c)
			}
		}
		if su.Log != "" {
			rel := su.Log
			if !strings.HasPrefix(rel, artifact.TestLogsDir+"/") {
				rel = path.Join(artifact.TestLogsDir, path.Base(rel))
			}
			if b, cut, err := readTail(dir, rel, maxLog); err == nil {
				sv.LogText, sv.LogCut = string(bytes.ToValidUTF8(b, []byte("�"))), cut
			}
		}
		tv.Suites = append(tv.Suites, sv)
	}
	return tv
}

// hashes lists what each gate bound and what the files hold now.
func hashes(dir string) []Hash {
	gates, err := evidence.ReadGates(dir)
	if err != nil {
		return []Hash{{Key: "error", Bound: err.Error()}}
	}
	now, _ := evidence.Now(dir, &lifecycle.Snapshot{})
	var out []Hash
	for _, k := range lifecycle.HashKeys() {
		b, bound := gates[k]
		n := now[k]
		if !bound && n == "" {
			continue
		}
		h := Hash{Key: k, File: lifecycle.HashFile(k), Now: n}
		if bound {
			h.Bound, h.Gate, h.Seq = b.SHA256, b.Edge(), b.Seq
			h.Match = b.SHA256 == n
		}
		out = append(out, h)
	}
	return out
}

// history lists the attempts archived under history/.
func history(dir string) []Attempt {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), "history")
	if err != nil {
		return nil
	}
	var out []Attempt
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		a := Attempt{Name: e.Name()}
		_ = fs.WalkDir(root.FS(), path.Join("history", e.Name()), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || len(a.Files) >= 200 {
				return nil
			}
			if fi, err := d.Info(); err == nil && fi.Mode().IsRegular() {
				a.Files = append(a.Files, FileRef{Path: p, Size: fi.Size()})
			}
			return nil
		})
		out = append(out, a)
	}
	// Newest attempt first: history folders are numbered.
	slices.SortFunc(out, func(a, b Attempt) int { return attemptNumber(b.Name) - attemptNumber(a.Name) })
	return out
}

func attemptNumber(name string) int {
	n := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}
