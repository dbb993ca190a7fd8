package board

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/orchdev/orch/internal/agent/tools"
	"github.com/orchdev/orch/internal/exit"
)

// Job is a phase's work started from the board (a worker, accept,
// revert): it runs in the background and its progress lines stream to
// the task page.
type Job struct {
	ID      string
	Task    string
	Action  string // "codegen", "review plan", "accept", …
	Started time.Time

	mu       sync.Mutex
	lines    []string
	dropped  int // lines dropped from the front (the page shows the last maxJobLines)
	tokens   map[string]int
	partial  string // the start of a streamed line not ended yet
	done     bool
	ended    time.Time
	errText  string
	code     exit.Code
	result   string
	warn     bool // the run ended but its outcome is not a pass (runOutcome)
	cancel   context.CancelFunc
	registry *jobs
}

// maxJobLines bounds the lines a job keeps.
const maxJobLines = 2000

// JobState is a job as the page and its events show it.
type JobState struct {
	ID      string   `json:"id"`
	Task    string   `json:"task"`
	Action  string   `json:"action"`
	Lines   []string `json:"lines"`
	From    int      `json:"from"` // the number of the first line in Lines
	Tokens  int      `json:"tokens"`
	Done    bool     `json:"done"`
	Error   string   `json:"error,omitempty"`
	Code    int      `json:"code,omitempty"`
	Result  string   `json:"result,omitempty"`
	Warn    bool     `json:"warn,omitempty"` // the result is not a pass: not shown in green
	Elapsed string   `json:"elapsed"`
}

// State returns the job's lines from line number from on.
func (j *Job) State(from int) JobState {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := JobState{ID: j.ID, Task: j.Task, Action: j.Action, Done: j.done, Error: j.errText, Code: int(j.code), Result: j.result, Warn: j.warn}
	for _, n := range j.tokens {
		s.Tokens += n
	}
	end := time.Now()
	if j.done {
		end = j.ended
	}
	s.Elapsed = end.Sub(j.Started).Round(100 * time.Millisecond).String()
	if from < j.dropped {
		from = j.dropped
	}
	s.From = from
	if i := from - j.dropped; i < len(j.lines) {
		s.Lines = append([]string(nil), j.lines[i:]...)
	}
	return s
}

// notPassed marks the job's result as not a pass (failed tests, a review
// that is not ok): the page does not show it as a success.
func (j *Job) notPassed() {
	j.mu.Lock()
	j.warn = true
	j.mu.Unlock()
}

// Running reports whether the job is still working.
func (j *Job) Running() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return !j.done
}

// say adds a message, one line per line of text.
func (j *Job) say(text string) {
	j.add(strings.Split(strings.TrimRight(text, "\n"), "\n"))
}

// add adds progress lines.
func (j *Job) add(lines []string) {
	j.mu.Lock()
	j.lines = append(j.lines, lines...)
	if over := len(j.lines) - maxJobLines; over > 0 {
		j.lines = append([]string(nil), j.lines[over:]...)
		j.dropped += over
	}
	j.mu.Unlock()
	j.registry.changed()
}

// Write takes a stream of output (a test suite's) line by line: a line
// split over writes is shown once it ends.
func (j *Job) Write(p []byte) (int, error) {
	j.mu.Lock()
	text := j.partial + string(p)
	i := strings.LastIndexByte(text, '\n')
	if i < 0 {
		j.partial = text
		j.mu.Unlock()
		return len(p), nil
	}
	j.partial = text[i+1:]
	j.mu.Unlock()
	j.add(strings.Split(text[:i], "\n"))
	return len(p), nil
}

// tool is the agents' OnTool: one line per tool call, as the CLI's
// progress lines say it.
func (j *Job) tool(role, name string, args json.RawMessage, refused bool) {
	line := role + ": " + tools.Describe(name, args)
	if refused {
		line += " (refused)"
	}
	j.say(line)
}

// token is the agents' OnToken: streamed tokens are counted, not shown.
func (j *Job) token(role, _ string) {
	j.mu.Lock()
	j.tokens[role]++
	n := j.tokens[role]
	j.mu.Unlock()
	if n%50 == 0 {
		j.registry.changed()
	}
}

// finish records the outcome.
func (j *Job) finish(result string, err error) {
	j.mu.Lock()
	rest := j.partial
	j.partial = ""
	j.mu.Unlock()
	if rest != "" {
		j.say(rest)
	}
	j.mu.Lock()
	j.done, j.ended = true, time.Now()
	j.result = result
	if err != nil {
		// As the CLI prints it: "orch: " once, and each hint (and each
		// joined error) on a line of its own.
		j.errText, j.code = exit.Format(err), exit.Of(err)
	}
	j.mu.Unlock()
	j.registry.changed()
}

// jobs holds the board's jobs, the last few per task.
type jobs struct {
	mu     sync.Mutex
	byTask map[string][]*Job
	// wake is closed and replaced whenever a job changes.
	wake chan struct{}
}

func newJobs() *jobs { return &jobs{byTask: map[string][]*Job{}, wake: make(chan struct{})} }

// changed wakes everyone waiting for job news.
func (js *jobs) changed() {
	js.mu.Lock()
	close(js.wake)
	js.wake = make(chan struct{})
	js.mu.Unlock()
}

// waiter returns a channel closed at the next change.
func (js *jobs) waiter() <-chan struct{} {
	js.mu.Lock()
	defer js.mu.Unlock()
	return js.wake
}

// last returns the task's most recent job, or nil.
func (js *jobs) last(id string) *Job {
	js.mu.Lock()
	defer js.mu.Unlock()
	l := js.byTask[id]
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

// get returns a task's job by id.
func (js *jobs) get(task, id string) *Job {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, j := range js.byTask[task] {
		if j.ID == id {
			return j
		}
	}
	return nil
}

// start registers a job unless one of the task's is running.
func (js *jobs) start(j *Job) bool {
	js.mu.Lock()
	defer js.mu.Unlock()
	l := js.byTask[j.Task]
	if len(l) > 0 && l[len(l)-1].Running() {
		return false
	}
	j.registry, j.tokens = js, map[string]int{}
	if len(l) >= 5 {
		l = l[1:]
	}
	js.byTask[j.Task] = append(l, j)
	return true
}

// cancelAll stops every running job (the server shuts down).
func (js *jobs) cancelAll() {
	js.mu.Lock()
	defer js.mu.Unlock()
	for _, l := range js.byTask {
		for _, j := range l {
			if j.cancel != nil {
				j.cancel()
			}
		}
	}
}
