// Package evidence binds a task's gates to the bytes they judged (contract
// section 6): the sha256 of the plan, the patch, the generated files, the
// code review and the test report that each gate recorded in its transcript
// event, and the checks that later steps — `orch next`, `orch status` and
// `orch accept` — make against them.
//
// It holds three things:
//
//   - hashing helpers (SHA256Hex, FilesDigest) that give each artifact the
//     hash the transcript records;
//   - CompareFiles, which applies code/diff.patch to the base commit in a
//     temporary index and checks that the result is exactly code/files/ for
//     every path the patch touches or code/files/ holds;
//   - Fold, which reads the hashes bound by the gates of the task's current
//     attempt out of its transcript, and CheckCommit, which `orch accept`
//     calls on the very bytes it is about to commit.
package evidence
