// Package agent holds orch's agents — the planner, the plan reviewers,
// codegen, the code reviewers and the accept advisor — and the runtime they
// share: which provider serves each role, the call cache, the model_call
// transcript events, prompts (embedded, overridable from .orch/prompts/)
// and the repository context handed to models.
//
// Agents write only the artifacts of the contract, into the staging folder
// of an orchestrator.Run; every structural decision (sub-states, aggregate
// verdicts, the diff, what happens next) is made here in code or by the
// orchestrator, never by a model. Model output is untrusted input: it is
// validated with the artifact package's strict decoders and path checks.
package agent
