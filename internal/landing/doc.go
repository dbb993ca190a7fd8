// Package landing puts an accepted change on the user's branch and takes it
// off again: the accept phase's worker (Acceptor: the decision, the checks
// that the evidence still describes the patch, the regression run, the
// commit) and the revert phase's (Reverter: a revert commit). Both move the
// branch through the engine's one crash-safe git effect, given to them as
// Engine (docs/git-effects.md); orchestrator.RecoverGit settles an effect a
// killed process left open.
//
// Like every phase's worker (docs/workers.md), they are run by the engine:
// the phase is marked running under the task's lock, the work happens
// without the lock into the run's stage, and the artifacts are committed
// under the lock after a revision check.
package landing
