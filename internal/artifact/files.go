package artifact

import (
	"github.com/orchdev/orch/internal/safepath"
)

// Paths of the artifacts, relative to a task folder, always with '/'.
const (
	PlanFile         = "planning/planning.ai.json"
	PlanMarkdownFile = "planning/plan.md"
	FilePlanFile     = "planning/plan.files.json"
	BriefFile        = "planning/brief.md"
	MeetingFile      = "planning/meeting.jsonl"
	PlanReviewFile   = "review/plan-review.json"
	CodeFilesDir     = "code/files"
	DiffFile         = "code/diff.patch"
	CodegenFile      = "code/codegen.json"
	CodeReviewFile   = "review/code-review.json"
	TestReportFile   = "test/report.json"
	DecisionFile     = "accept/decision.json"
	RevertRecordFile = "revert/record.json"

	// Human-readable projections and companions.
	PlanReviewMarkdownFile = "review/plan-review.md"
	CodeReviewMarkdownFile = "review/code-review.md"
	TestLogsDir            = "test/logs"
	AcceptSummaryFile      = "accept/summary.md"
	AdviceFile             = "accept/advice.json"
	AdviceMarkdownFile     = "accept/advice.md"
	RegressionReportFile   = "accept/regression-report.json"
	RegressionLogsDir      = "accept/regression-logs"

	// HistoryDir holds archived attempts: history/<n>-<phase>/.
	HistoryDir = "history"
)

// Limits on what is read. A file above its limit is refused with
// ErrTooLarge before it is read whole.
const (
	// MaxJSONBytes is the largest JSON artifact accepted (16 MiB).
	MaxJSONBytes = 16 << 20
	// MaxDiffBytes is the largest code/diff.patch accepted (512 MiB).
	MaxDiffBytes = 512 << 20
	// MaxCodeFileBytes is the largest single file under code/files (8 MiB).
	MaxCodeFileBytes = 8 << 20
	// MaxCodeFiles is the most regular files accepted under code/files; the
	// same bound applies separately to the number of directories there.
	MaxCodeFiles = 20000
	// MaxDepth is the deepest nesting of JSON objects and arrays accepted;
	// the top-level object is at depth 1.
	MaxDepth = 64
	// MaxPathBytes and MaxPathElementBytes bound repository paths.
	MaxPathBytes        = safepath.MaxBytes
	MaxPathElementBytes = safepath.MaxElementBytes
)
