package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchdev/orch/internal/agent"
	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
)

// planDraft is the structured answer asked of the planner: the fields of
// planning/planning.ai.json the model writes. id and brief are not in it
// (orch sets them) and neither are answers (only a person answers; orch
// copies the answers in).
type planDraft struct {
	Title              string          `json:"title" desc:"short imperative title of the change"`
	Goals              []string        `json:"goals"`
	Scope              draftScope      `json:"scope"`
	Work               draftWork       `json:"work"`
	Risks              []string        `json:"risks"`
	Assumptions        []string        `json:"assumptions"`
	AcceptanceCriteria []string        `json:"acceptance_criteria"`
	TestPlan           draftTestPlan   `json:"test_plan"`
	FilePlan           []draftFile     `json:"file_plan" desc:"every repository file the change creates, updates or deletes"`
	Questions          []draftQuestion `json:"questions" desc:"questions for the person; keep the ids of earlier questions"`
}

type draftScope struct {
	InScope    []string `json:"in_scope"`
	OutOfScope []string `json:"out_of_scope"`
}

type draftWork struct {
	Tasks []draftTask `json:"tasks"`
}

type draftTask struct {
	Title  string `json:"title"`
	Detail string `json:"detail"`
}

type draftTestPlan struct {
	Strategy string   `json:"strategy"`
	Cases    []string `json:"cases"`
}

type draftFile struct {
	Path    string `json:"path" desc:"relative to the repository root, with /"`
	Intent  string `json:"intent" enum:"create,update,delete"`
	Summary string `json:"summary"`
}

type draftQuestion struct {
	ID       string `json:"id" desc:"short stable id such as q1"`
	Text     string `json:"text"`
	Blocking bool   `json:"blocking" desc:"true when the plan cannot be finished without the answer"`
}

// questionIDPattern keeps question ids easy to type in `orch answer ID`.
var questionIDPattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// knownAnswer is an answer a person gave, with its question as it was
// asked (to put the question back when the model drops it).
type knownAnswer struct {
	ID       string
	Text     string
	Blocking bool
	Answer   string
}

// builtPlan is a validated planning.ai.json.
type builtPlan struct {
	Data     []byte // the file's bytes
	Plan     artifact.Plan
	Restored []string // ids of answers the model dropped or changed, put back by orch
	Dropped  []string // ids of answers the model tried to set itself, removed
}

// buildPlan turns the planner's raw answer into planning.ai.json: the
// model's object with id and brief forced, the person's answers put back
// by question id (and questions the model dropped re-added), answers the
// model wrote itself removed, then checked with the contract's decoder and
// against the repository (root; "" skips the repository checks). Any error
// goes back to the model.
func buildPlan(raw []byte, id, brief string, known []knownAnswer, root string) (builtPlan, error) {
	var out builtPlan
	obj, err := parseOrderedJSON(raw)
	if err != nil {
		return out, err
	}
	if err := obj.setValue("id", id); err != nil {
		return out, err
	}
	if err := obj.setValue("brief", brief); err != nil {
		return out, err
	}
	obj = obj.front("id", "title", "brief")
	// Shape first, with the contract's JSON paths in the message.
	data, err := json.Marshal(obj)
	if err != nil {
		return out, err
	}
	if _, err := artifact.DecodePlan(artifact.PlanFile, data); err != nil {
		return out, err
	}
	if err := mergeAnswers(&obj, known, &out); err != nil {
		return out, err
	}
	if out.Data, err = agent.IndentJSON(obj); err != nil {
		return out, err
	}
	if out.Plan, err = artifact.DecodePlan(artifact.PlanFile, out.Data); err != nil {
		return out, err
	}
	if err := checkQuestions(out.Plan.Questions); err != nil {
		return out, err
	}
	if err := checkFilePlan(out.Plan.FilePlan, root); err != nil {
		return out, err
	}
	return out, nil
}

// mergeAnswers rewrites the questions array: each question's answer is the
// person's answer for its id, or null; known answers whose question the
// model left out are appended with their question.
func mergeAnswers(obj *orderedJSON, known []knownAnswer, out *builtPlan) error {
	var qs []orderedJSON
	if raw, ok := obj.get("questions"); ok && string(raw) != "null" {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return fmt.Errorf("questions: %w", err)
		}
		for i, item := range items {
			q, err := parseOrderedJSON(item)
			if err != nil {
				return fmt.Errorf("questions[%d]: %w", i, err)
			}
			qs = append(qs, q)
		}
	}
	byID := map[string]knownAnswer{}
	for _, k := range known {
		byID[k.ID] = k
	}
	present := map[string]bool{}
	for i := range qs {
		var qid string
		if raw, ok := qs[i].get("id"); ok {
			_ = json.Unmarshal(raw, &qid)
		}
		present[qid] = true
		var modelAnswer *string
		if raw, ok := qs[i].get("answer"); ok {
			_ = json.Unmarshal(raw, &modelAnswer)
		}
		k, answered := byID[qid]
		switch {
		case answered:
			if modelAnswer == nil || *modelAnswer != k.Answer {
				out.Restored = append(out.Restored, qid)
			}
			if err := qs[i].setValue("answer", k.Answer); err != nil {
				return err
			}
		default:
			if modelAnswer != nil && strings.TrimSpace(*modelAnswer) != "" {
				out.Dropped = append(out.Dropped, qid)
			}
			qs[i].set("answer", json.RawMessage("null"))
		}
	}
	for _, k := range known {
		if present[k.ID] {
			continue
		}
		present[k.ID] = true
		q := orderedJSON{}
		for _, f := range []struct {
			key string
			v   any
		}{{"id", k.ID}, {"text", k.Text}, {"blocking", k.Blocking}, {"answer", k.Answer}} {
			if err := q.setValue(f.key, f.v); err != nil {
				return err
			}
		}
		qs = append(qs, q)
		out.Restored = append(out.Restored, k.ID)
	}
	if qs == nil {
		qs = []orderedJSON{}
	}
	return obj.setValue("questions", qs)
}

// checkQuestions refuses duplicate or awkward question ids.
func checkQuestions(qs []artifact.Question) error {
	seen := map[string]bool{}
	for i, q := range qs {
		if !questionIDPattern.MatchString(q.ID) {
			return fmt.Errorf("%s: $.questions[%d].id: expected a short id of letters, digits, '.', '_' or '-' (such as q1), got %q", artifact.PlanFile, i, clip.Bytes(q.ID, 80))
		}
		if seen[q.ID] {
			return fmt.Errorf("%s: $.questions[%d].id: expected unique question ids, got %q twice", artifact.PlanFile, i, q.ID)
		}
		seen[q.ID] = true
	}
	return nil
}

// checkFilePlan checks each planned path against the contract's path rules
// and, when root is set, against the repository: a file to update or
// delete must exist as a regular file, a file to create must not exist,
// and no path may go through a symlink.
func checkFilePlan(files []artifact.FileEntry, root string) error {
	for i, f := range files {
		at := fmt.Sprintf("%s: $.file_plan[%d].path", artifact.PlanFile, i)
		if err := artifact.CheckPath(f.Path); err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if root == "" {
			continue
		}
		fi, err := lstatInRepo(root, f.Path)
		switch {
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("%s: %q: %w", at, f.Path, err)
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%s: %q is a symbolic link; plan the file it points to", at, f.Path)
		case err == nil && fi.IsDir():
			return fmt.Errorf("%s: %q is a folder; list the files inside it", at, f.Path)
		case err == nil && !fi.Mode().IsRegular():
			return fmt.Errorf("%s: %q is not a regular file", at, f.Path)
		case err == nil && f.Intent == "create":
			return fmt.Errorf("%s: %q already exists: use intent \"update\"", at, f.Path)
		case err != nil && f.Intent != "create":
			return fmt.Errorf("%s: %q does not exist in the repository: use intent \"create\" for a new file, or correct the path", at, f.Path)
		}
	}
	return nil
}

// lstatInRepo stats rel below root without following symlinks at any
// level: a parent folder that is a symlink is reported as the error.
func lstatInRepo(root, rel string) (os.FileInfo, error) {
	parts := strings.Split(rel, "/")
	cur := root
	for i, p := range parts {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil {
			return nil, err
		}
		if i < len(parts)-1 {
			if fi.Mode()&os.ModeSymlink != 0 {
				return nil, fmt.Errorf("folder %q is a symbolic link", strings.Join(parts[:i+1], "/"))
			}
			if !fi.IsDir() {
				return nil, fmt.Errorf("%q is not a folder", strings.Join(parts[:i+1], "/"))
			}
		} else {
			return fi, nil
		}
	}
	return nil, os.ErrNotExist
}
