package landing

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/evidence"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/work"
)

// Expectation is what a person saw when deciding at accept (README,
// "Every gate action names what it acted on"): the task's revision and the
// sha256 of evidence files by key (lifecycle.HashKeys: diff_sha256, …),
// each the full hex or a prefix of at least MinHashPrefix digits. Zero
// fields name nothing; a mismatch refuses the decision with the
// engine's stale refusal (Engine.Stale) and nothing is done.
type Expectation struct {
	Revision int64
	SHA256   map[string]string
}

// MinHashPrefix is the shortest hash prefix an expectation may name.
const MinHashPrefix = 8

// Empty reports whether the expectation names nothing.
func (e Expectation) Empty() bool { return e.Revision == 0 && len(e.SHA256) == 0 }

// Judged is what a decision judged, recorded in accept/decision.json and
// in the transcript: the revision the task was at when the person decided
// and the sha256 of each evidence file then.
type Judged = event.Judged

// ParseExpect reads `orch accept --expect`: a revision (digits) or the
// sha256 of code/diff.patch (hex, at least MinHashPrefix digits).
func ParseExpect(s string) (Expectation, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Expectation{}, nil
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && len(s) < MinHashPrefix {
		if n <= 0 {
			return Expectation{}, fmt.Errorf("--expect: revision %d: a revision is 1 or more", n)
		}
		return Expectation{Revision: n}, nil
	}
	if err := checkHex(s); err != nil {
		return Expectation{}, fmt.Errorf("--expect %q: expected a revision (as `orch status` prints it) or the sha256 of %s (at least %d hex digits): %v", s, lifecycle.HashFile(lifecycle.HashDiff), MinHashPrefix, err)
	}
	return Expectation{SHA256: map[string]string{lifecycle.HashDiff: strings.ToLower(s)}}, nil
}

func checkHex(s string) error {
	if len(s) < MinHashPrefix || len(s) > 64 {
		return fmt.Errorf("%d digits", len(s))
	}
	for _, c := range strings.ToLower(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("%q is not a hex digit", c)
		}
	}
	return nil
}

// CheckExpectation refuses an expectation whose hashes are malformed or
// name unknown keys (a usage error, before anything runs).
func CheckExpectation(e Expectation) error {
	for k, h := range e.SHA256 {
		if !slices.Contains(lifecycle.HashKeys(), k) {
			return fmt.Errorf("expected evidence %q: not one of %s", k, strings.Join(lifecycle.HashKeys(), ", "))
		}
		if err := checkHex(h); err != nil {
			return fmt.Errorf("expected %s %q: %v", k, h, err)
		}
	}
	if e.Revision < 0 {
		return fmt.Errorf("expected revision %d: a revision is 1 or more", e.Revision)
	}
	return nil
}

// hashesDiffer lists the expected hashes the task's files no longer have.
func hashesDiffer(want map[string]string, now map[string]string) []string {
	var out []string
	for _, k := range lifecycle.HashKeys() {
		w, ok := want[k]
		if !ok {
			continue
		}
		n := now[k]
		if !strings.HasPrefix(n, strings.ToLower(w)) || n == "" {
			have := "absent"
			if n != "" {
				have = n[:min(12, len(n))]
			}
			out = append(out, fmt.Sprintf("%s: shown %s, now %s", lifecycle.HashFile(k), w[:min(12, len(w))], have))
		}
	}
	return out
}

// checkExpectation refuses when the task, as in shows it, is not what
// the person saw.
func checkExpectation(eng Engine, in work.Input, e Expectation) error {
	if e.Empty() {
		return nil
	}
	var differ []string
	if len(e.SHA256) > 0 {
		now, _ := evidence.Now(in.Dir, &lifecycle.Snapshot{})
		differ = hashesDiffer(e.SHA256, now)
	}
	if (e.Revision == 0 || e.Revision == in.Revision) && len(differ) == 0 {
		return nil
	}
	seen := e.Revision
	if seen == 0 {
		seen = in.Revision
	}
	return eng.Stale(in.Task, seen, in.Revision, differ)
}

// CheckExpected refuses (the engine's stale refusal, an
// *orchestrator.StaleError) when task id is not what the person saw:
// before an accept starts in the background, so that the refusal comes at
// once. Accept checks again on its run.
func CheckExpected(eng Engine, id string, e Expectation) error {
	if e.Empty() {
		return nil
	}
	in, err := eng.Input(context.Background(), id, lifecycle.Accept)
	if err != nil {
		return err
	}
	return checkExpectation(eng, in, e)
}

// Shown is what a person is shown of task id right now: its revision and
// the sha256 of each evidence file. A command that shows the evidence and
// then asks passes it as the decision's Expectation.
func Shown(eng Engine, id string) (Expectation, error) {
	in, err := eng.Input(context.Background(), id, lifecycle.Accept)
	if err != nil {
		return Expectation{}, err
	}
	now, _ := evidence.Now(in.Dir, &lifecycle.Snapshot{})
	return Expectation{Revision: in.Revision, SHA256: now}, nil
}

// judged reads what the decision judges: the revision before the run and
// the evidence hashes now.
func judged(dir string, revision int64) Judged {
	now, _ := evidence.Now(dir, &lifecycle.Snapshot{})
	return Judged{Revision: revision, SHA256: now}
}
