// Package layers is the table of orch's layers: which packages stand at
// which level, so that dependencies run one way only, from the front ends
// down to the store and the model of the lifecycle:
//
//	front ends → steering → workers → orchestrator → model and edges → base
//
// A package may import packages of its own layer and of the layers below
// it, never one above; test-support packages are imported only by tests.
// The test of this package checks every import of the module against the
// table, and that every package has its place in it, so a new package is
// placed on purpose. The table is data; nothing imports this package.
package layers

// Layer is one level of the table, from the bottom (Base) up.
type Layer int

// The layers, bottom up.
const (
	// Base holds helpers with no knowledge of tasks: text, exit codes,
	// safe paths, durable files, processes, the git binary.
	Base Layer = iota
	// Model holds the lifecycle's model and the parts at its edges: the
	// transition table and decisions (lifecycle, pure), the artifacts,
	// the task store, events, evidence, configuration, the model
	// providers, the test runner and sandbox, the repository map.
	Model
	// Orchestrator observes a task, decides with the table and commits
	// the transition; it runs a phase's worker (orchestrator.Run) and
	// commits what the worker staged.
	Orchestrator
	// Workers produce a phase's artifacts: the agents, the test phase,
	// accept and revert. They import neither the orchestrator nor the
	// task store (Engine): the engine calls them, never the reverse.
	Workers
	// Steering chooses the work: the registry of phase workers, the
	// autopilot, the next step, the status picture.
	Steering
	// Front holds the front ends: the CLI, the REPL, the web board, the
	// MCP server, the demo, and the binary.
	Front
	// TestSupport holds what only tests (and benchmarks) import.
	TestSupport
)

var names = map[Layer]string{Base: "base", Model: "model", Orchestrator: "orchestrator", Workers: "workers", Steering: "steering", Front: "front", TestSupport: "test support"}

func (l Layer) String() string { return names[l] }

// Packages places every package of the module, by its path below the
// module root.
var Packages = map[string]Layer{
	"internal/clip":       Base,
	"internal/exit":       Base,
	"internal/safepath":   Base,
	"internal/durable":    Base,
	"internal/procstat":   Base,
	"internal/docblock":   Base,
	"internal/layers":     Base,
	"internal/pager":      Base,
	"internal/termtext":   Base,
	"internal/gitx":       Base,
	"internal/strictjson": Base,
	"internal/patch":      Base,
	"internal/lazyre":     Base,
	"internal/fileid":     Base,

	"internal/lifecycle":  Model,
	"internal/artifact":   Model,
	"internal/task":       Model,
	"internal/event":      Model,
	"internal/evidence":   Model,
	"internal/config":     Model,
	"internal/visibility": Model,
	"internal/llm":        Model,
	"internal/sandbox":    Model,
	"internal/testreport": Model,
	"internal/testrun":    Model,
	"internal/repomap":    Model,
	"internal/work":       Model,

	"internal/orchestrator": Orchestrator,

	"internal/agent":         Workers,
	"internal/agent/tools":   Workers,
	"internal/agent/planner": Workers,
	"internal/agent/review":  Workers,
	"internal/agent/codegen": Workers,
	"internal/agent/advisor": Workers,
	"internal/testphase":     Workers,
	"internal/landing":       Workers,

	"internal/worker":    Steering,
	"internal/autopilot": Steering,
	"internal/nextstep":  Steering,
	"internal/view":      Steering,
	"internal/fleetlink": Steering,

	"internal/cli":       Front,
	"internal/repl":      Front,
	"internal/board":     Front,
	"internal/mcpserver": Front,
	"internal/demo":      Front,
	"cmd/orch":           Front,

	"internal/gittest":                 TestSupport,
	"internal/hostile":                 TestSupport,
	"internal/phasetest":               TestSupport,
	"internal/agent/agenttest":         TestSupport,
	"internal/repomap/synthetic":       TestSupport,
	"internal/artifact/artifacttest":   TestSupport,
	"internal/llm/llmtest":             TestSupport,
	"internal/proctest":                TestSupport,
	"internal/ptytest":                 TestSupport,
	"internal/syncbuf":                 TestSupport,
	"internal/fuzztest":                TestSupport,
	"internal/fleetlink/fleetlinktest": TestSupport,
	"bench/ecobench":                   TestSupport,
	"bench/orchbench":                  TestSupport,
	"bench/mapbench":                   TestSupport,
}

// Engine lists the packages no worker (a package of the Workers layer)
// may import: the engine and the task store. A worker is given its input
// and returns its output; it never locks, enters a phase or commits
// (docs/workers.md).
var Engine = []string{"internal/orchestrator", "internal/task"}

// Sideways lists, for a worker, the other workers it must not import:
// what one phase's work needs of another (codegen's run_tests and
// accept's regression check need a test run) is injected as an
// interface by the registry (work.TestRunner), never called directly.
var Sideways = map[string][]string{
	"internal/agent/codegen": {"internal/testphase", "internal/landing"},
	"internal/landing":       {"internal/testphase", "internal/agent/codegen"},
	"internal/agent/advisor": {"internal/landing", "internal/testphase"},
	"internal/agent/planner": {"internal/testphase", "internal/landing", "internal/agent/codegen"},
	"internal/agent/review":  {"internal/testphase", "internal/landing", "internal/agent/codegen"},
	"internal/testphase":     {"internal/landing", "internal/agent/codegen"},
}

// Pure lists the only module packages a package may import at all, for the
// packages whose job forbids more: the lifecycle decides from data alone
// (no store, no git, no models, no files of its own).
var Pure = map[string][]string{
	"internal/lifecycle": {"internal/artifact", "internal/patch", "internal/exit", "internal/clip", "internal/safepath", "internal/strictjson"},
}
