// Package landing puts an accepted change on the user's branch and takes it
// off again: the accept phase's work (the decision, the checks that the
// evidence still describes the patch, the regression run, the commit) and
// revert's (a revert commit). Both move the branch through one crash-safe
// git effect (gitfx.go, contract section 7), and RecoverGit settles an
// effect a killed process left open.
//
// Accept and Revert follow the orchestrator's RunPhase protocol: the phase
// is marked running under the task's lock, the work happens without the
// lock into a staging folder, and the artifacts are committed under the
// lock after a revision check.
package landing
