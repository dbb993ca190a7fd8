package lifecycle

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/exit"
)

// Keys of the hashes a gate records in the "evidence" object of its
// transcript event (README, "Evidence is bound to the change"). Each is the lower-case hex sha256
// of the artifact's bytes; for code/files/ it is the digest of
// evidence.CodeFiles (one "path NUL sha256 LF" line per file, in path
// order).
const (
	HashPlan   = "plan_sha256"   // planning/planning.ai.json
	HashDiff   = "diff_sha256"   // code/diff.patch
	HashFiles  = "files_sha256"  // code/files/
	HashReview = "review_sha256" // review/code-review.json
	HashReport = "report_sha256" // test/report.json
)

// HashKeys lists the keys in the order checks report them: the earliest
// artifact first.
func HashKeys() []string { return []string{HashPlan, HashFiles, HashDiff, HashReview, HashReport} }

// HashFile names the artifact a key is the hash of.
func HashFile(key string) string {
	switch key {
	case HashPlan:
		return artifact.PlanFile
	case HashDiff:
		return artifact.DiffFile
	case HashFiles:
		return artifact.CodeFilesDir + "/"
	case HashReview:
		return artifact.CodeReviewFile
	case HashReport:
		return artifact.TestReportFile
	}
	return key
}

// GateHashes returns the keys the decided edge from → to records: each gate
// binds what it judged and everything judged before it. Other edges (going
// back, revert, done) record nothing. An override records the hash of every
// artifact present (see Evidence.Present).
func GateHashes(from, to Phase) []string {
	switch {
	case from == Planning && to == PlanReview:
		return []string{HashPlan}
	case from == PlanReview && to == Codegen:
		return []string{HashPlan}
	case from == Codegen && to == Review:
		return []string{HashPlan, HashFiles, HashDiff}
	case from == Review && to == Test:
		return []string{HashPlan, HashFiles, HashDiff, HashReview}
	case from == Test && to == Accept:
		return []string{HashPlan, HashFiles, HashDiff, HashReview, HashReport}
	}
	return nil
}

// OutputKey is the key of the artifact phase p produces and a later phase
// judges: the plan, the patch, the code review; "" for the other phases.
func OutputKey(p Phase) string {
	switch p {
	case Planning:
		return HashPlan
	case Codegen:
		return HashDiff
	case Review:
		return HashReview
	}
	return ""
}

// Bound is a hash a gate recorded.
type Bound struct {
	SHA256 string
	Seq    int64 // the transcript line (seq) of the event
	From   Phase
	To     Phase
	// Override is true when the record was made by an override, which
	// binds what was present without judging it.
	Override bool
}

// Edge names the gate for messages: "review → test" or
// "override codegen → test".
func (b Bound) Edge() string {
	e := fmt.Sprintf("%s → %s", b.From, b.To)
	if b.Override {
		return "override " + e
	}
	return e
}

// Gates are the hashes bound by the gates of the task's current attempt,
// by key.
type Gates map[string]Bound

// GateEvent is what FoldGates reads of one transcript event that changed
// the phase (a transition, an override or a redo).
type GateEvent struct {
	Seq      int64
	Override bool
	Redo     bool
	From, To Phase
	Hashes   map[string]string // the event's "evidence"
}

// FoldGates returns the hashes bound by the current attempt's gates after
// the events, in transcript order. A forward move records its hashes (a
// later record of a key replaces an earlier one). A move back to a phase
// (a regression, a redo, even of the current phase) starts a new attempt
// there: every record made by an edge leaving that phase or a later one is
// dropped, so a gate that is passed again binds afresh while the records of
// the gates before it stay.
func FoldGates(evs []GateEvent) Gates {
	// Every key keeps its records in order, so dropping the newer ones
	// uncovers what an earlier gate bound.
	hist := map[string][]Bound{}
	for _, e := range evs {
		if !e.From.Valid() || !e.To.Valid() {
			continue // a damaged line: `orch verify` reports it
		}
		back := e.Redo || (e.To.Index() <= e.From.Index() && e.To != Done)
		if back {
			for k, bs := range hist {
				kept := bs[:0]
				for _, b := range bs {
					if b.From.Index() < e.To.Index() {
						kept = append(kept, b)
					}
				}
				hist[k] = kept
			}
			continue
		}
		for k, sum := range e.Hashes {
			if sum != "" {
				hist[k] = append(hist[k], Bound{SHA256: sum, Seq: e.Seq, From: e.From, To: e.To, Override: e.Override})
			}
		}
	}
	g := Gates{}
	for k, bs := range hist {
		if len(bs) > 0 {
			g[k] = bs[len(bs)-1]
		}
	}
	return g
}

// FoldSentBack returns what the pending regressions judged, by key: a
// regression (a decided move back to phase P) records the hash of P's
// output (OutputKey) that was judged, and the forward edge out of P needs
// another one (CondNewPlan, CondNewPatch, CondNewReview). A record stands
// until the task moves forward out of P (by an edge whose requirement
// held, or by an override); a redo or a regression to an earlier phase
// than P drops it. Bound.To is P.
func FoldSentBack(evs []GateEvent) Gates {
	sb := Gates{}
	for _, e := range evs {
		if !e.From.Valid() || !e.To.Valid() {
			continue
		}
		back := e.Redo || (e.To.Index() <= e.From.Index() && e.To != Done)
		if back {
			for k, b := range sb {
				if b.To.Index() > e.To.Index() {
					delete(sb, k)
				}
			}
			if key := OutputKey(e.To); !e.Redo && !e.Override && key != "" && e.Hashes[key] != "" {
				sb[key] = Bound{SHA256: e.Hashes[key], Seq: e.Seq, From: e.From, To: e.To}
			}
			continue
		}
		for k, b := range sb {
			if b.To == e.From {
				delete(sb, k)
			}
		}
	}
	return sb
}

// Evidence is what the checks of section 6 read: the hashes the gates
// bound, the hashes of the artifacts now, and the comparison of code/files
// with the patch when it was made.
type Evidence struct {
	Gates Gates
	// SentBack holds what pending regressions judged (FoldSentBack).
	SentBack Gates
	// ReviewedPlan is the plan's sha256 the plan review names
	// (plan_sha256; "" when it names none): the plan it judged.
	ReviewedPlan string
	// Landed is orch's commit of the task's change found in the
	// repository by its trailers; nil when it was not looked for (only
	// the decision out of accept looks).
	Landed *Landed
	// Now holds the sha256 of each artifact as it is now, by key; a key is
	// missing when the artifact is.
	Now map[string]string
	// Agreement is the comparison of code/files/ with code/diff.patch
	// applied to the base; nil when it was not made.
	Agreement *Agreement
}

// Landed is what the repository holds of the task's change: the newest
// commit with the trailer Orch-Task naming the task that no revert commit
// of the task undoes.
type Landed struct {
	SHA string // "" when there is none
	// DiffSHA256 is its Orch-Diff trailer: the sha256 of the patch it
	// applied ("" on commits made before orch wrote the trailer).
	DiffSHA256 string
	// Err is set when the repository could not be searched.
	Err error
}

// Agreement is the outcome of comparing code/files/ with code/diff.patch
// applied to the base commit.
type Agreement struct {
	// Err is nil when they agree. An *artifact.Error names the first path
	// that disagrees (or the patch that does not apply, or the base that is
	// not a commit); any other error means the comparison could not be
	// made.
	Err error
}

// Present returns the hashes of every artifact present now, for an
// override's record.
func (e Evidence) Present() map[string]string {
	out := map[string]string{}
	for _, k := range HashKeys() {
		if sum := e.Now[k]; sum != "" {
			out[k] = sum
		}
	}
	return out
}

// Record returns the hashes the edge from → to records: the keys of
// GateHashes with the artifacts present now. A regression (a move back to
// phase P) records the output of P that was judged (OutputKey): the plan
// the plan review names, else the hash the gate into the judging phase
// bound, else the artifact's now; FoldSentBack reads it.
func (e Evidence) Record(from, to Phase) map[string]string {
	if to.Index() <= from.Index() && to != Done {
		key := OutputKey(to)
		sum := e.Now[key]
		if b, ok := e.Gates[key]; ok && b.SHA256 != "" {
			sum = b.SHA256
		}
		if key == HashPlan && from == PlanReview && e.ReviewedPlan != "" {
			sum = strings.ToLower(e.ReviewedPlan)
		}
		if key == "" || sum == "" {
			return nil
		}
		return map[string]string{key: sum}
	}
	keys := GateHashes(from, to)
	if len(keys) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, k := range keys {
		if sum := e.Now[k]; sum != "" {
			out[k] = sum
		}
	}
	return out
}

// EvidenceError says an artifact is not the one a gate recorded: it was
// edited (or removed) after the gate judged it.
type EvidenceError struct {
	Key   string
	Bound Bound
	Now   string // "" when the artifact is missing now
}

func (e *EvidenceError) Error() string {
	now := "it is missing now"
	if e.Now != "" {
		now = "now sha256 " + e.Now
	}
	return fmt.Sprintf("%s changed after the %s gate (transcript seq %d) recorded it: recorded sha256 %s, %s; %s",
		HashFile(e.Key), e.Bound.Edge(), e.Bound.Seq, e.Bound.SHA256, now, e.Do())
}

// ExitCode is 4: an artifact is not what it must be.
func (e *EvidenceError) ExitCode() exit.Code { return exit.Invalid }

// Do says what to do about the change.
func (e *EvidenceError) Do() string {
	switch e.Key {
	case HashPlan:
		return "codegen works from the reviewed plan: restore it, or take the plan through review again (`orch redo plan_review`)"
	case HashDiff, HashFiles:
		return "the review and the tests judged the recorded change and nothing else is committed: restore it, re-run codegen (`orch redo codegen`), " +
			"or make code/files/ and code/diff.patch agree and have the change reviewed and tested again (`orch redo review`)"
	case HashReview:
		return "restore it, or review the change again (`orch redo review`)"
	case HashReport:
		return "restore it, or run the tests again (`orch redo test`, then `orch test`)"
	}
	return "restore it"
}

// Changed returns an *EvidenceError for the first of keys (in HashKeys
// order) whose artifact differs from what the gates bound, or nil. Keys no
// gate bound are not checked.
func (e Evidence) Changed(keys ...string) error {
	for _, k := range HashKeys() {
		if !slices.Contains(keys, k) {
			continue
		}
		b, ok := e.Gates[k]
		if !ok || b.SHA256 == "" {
			continue
		}
		if now := e.Now[k]; !strings.EqualFold(now, b.SHA256) {
			return &EvidenceError{Key: k, Bound: b, Now: now}
		}
	}
	return nil
}

// judged checks the patch an artifact says it judged (its diff_sha256)
// against the current code/diff.patch. When they differ because the patch
// was edited after a gate recorded the very patch the artifact judged, the
// error is that edit (an *EvidenceError); otherwise the artifact is of
// another patch (judgedOther).
func (e Evidence) judged(file, judged, do string) error {
	now := e.Now[HashDiff]
	if judged == "" || strings.EqualFold(judged, now) {
		return nil
	}
	if b, ok := e.Gates[HashDiff]; ok && strings.EqualFold(judged, b.SHA256) {
		return &EvidenceError{Key: HashDiff, Bound: b, Now: now}
	}
	return judgedOther(file, judged, now, do)
}

// judgedOther returns an *artifact.Error when an artifact that names the
// patch it judged (field diff_sha256) names another one than the current
// code/diff.patch.
func judgedOther(file, judged, now, do string) error {
	if judged == "" || strings.EqualFold(judged, now) {
		return nil
	}
	got := judged + ", the sha256 of another patch: " + do
	if now == "" {
		return &artifact.Error{File: file, JSONPath: "$.diff_sha256", Expected: "the sha256 of code/diff.patch, which is missing", Got: got, Err: artifact.ErrSchema}
	}
	return &artifact.Error{File: file, JSONPath: "$.diff_sha256", Expected: "the sha256 of code/diff.patch now, " + now, Got: got, Err: artifact.ErrSchema}
}

// ErrUnbound is matched (through *artifact.Error) when no gate recorded the
// patch orch accept is about to commit.
var ErrUnbound = errors.New("no gate recorded the change")

// CheckCommit reports whether patchSHA — the sha256 of the very bytes
// `orch accept` is about to commit — is the patch the gates recorded, and
// whether the plan, code/files/, the code review and the test report are
// still the ones they judged; a review or report naming another patch
// (diff_sha256) fails too. s needs Evidence (Gates, and Now for the other
// artifacts; patchSHA stands for the patch), CodeReview and TestReport.
//
// It returns nil, an *EvidenceError naming the file and both hashes, or an
// *artifact.Error (a review or report of another patch, or a patch no gate
// recorded: ErrUnbound).
func CheckCommit(s Snapshot, patchSHA string) error {
	ev := s.Evidence
	now := make(map[string]string, len(ev.Now)+1)
	for k, v := range ev.Now {
		now[k] = v
	}
	now[HashDiff] = patchSHA
	ev.Now = now
	if b, ok := ev.Gates[HashDiff]; !ok || b.SHA256 == "" {
		return &artifact.Error{File: artifact.DiffFile,
			Expected: "a patch whose sha256 a gate recorded (codegen → review, review → test, test → accept, or an override)",
			Got:      "no such record in the transcript (sha256 now " + patchSHA + "): take the change through review and test again (`orch redo review`)",
			Err:      ErrUnbound}
	}
	if err := ev.Changed(HashKeys()...); err != nil {
		return err
	}
	if s.CodeReview.OK() {
		if err := judgedOther(artifact.CodeReviewFile, s.CodeReview.Value.DiffSHA256, patchSHA,
			"the review judged another patch: review the current one (`orch redo review`)"); err != nil {
			return err
		}
	}
	if s.TestReport.OK() {
		if err := judgedOther(artifact.TestReportFile, s.TestReport.Value.DiffSHA256, patchSHA,
			"the tests ran on another patch: run them again (`orch redo test`, then `orch test`)"); err != nil {
			return err
		}
	}
	return nil
}

// GatesTable renders, for the docs, each gate of the table with the hashes
// its transcript event records, in decision order.
func GatesTable() string {
	var b strings.Builder
	b.WriteString("| gate | records (`evidence` of the transition event) |\n|---|---|\n")
	for _, e := range Lifecycle().Edges {
		keys := GateHashes(e.From, e.To)
		if e.Kind != Decided || len(keys) == 0 {
			continue
		}
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("`%s` (%s)", k, HashFile(k)))
		}
		fmt.Fprintf(&b, "| `%s → %s` | %s |\n", e.From, e.To, strings.Join(parts, ", "))
	}
	b.WriteString("| a forward `override` | every key whose artifact is present |\n")
	for _, p := range Phases() {
		if k := OutputKey(p); k != "" {
			fmt.Fprintf(&b, "| a regression to `%s` | `%s` (%s): the one judged, which the edge out of %s needs changed |\n", p, k, HashFile(k), p)
		}
	}
	return b.String()
}
