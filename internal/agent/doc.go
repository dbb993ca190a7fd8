// Package agent is the runtime orch's agents share: which provider serves
// each role, the call cache, the model_call transcript events, budgets and
// costs, the tool loop (Ask, Loop), prompts (embedded, overridable from
// .orch/prompts/), the repository context handed to models, and what
// earlier attempts of a task left behind (History, Failures).
//
// The roles live in sub-packages, one per job: planner (the planning
// phase), review (one reviewer engine for plan review and code review),
// codegen (the codegen phase) and advisor (the accept advisor). agenttest
// holds the fixtures of their tests.
//
// Agents write only the artifacts of the contract, into the staging folder
// of an orchestrator.Run; every structural decision (sub-states, aggregate
// verdicts, the diff, what happens next) is made in code or by the
// orchestrator, never by a model. Model output is untrusted input: it is
// validated with the artifact package's strict decoders and path checks.
package agent
