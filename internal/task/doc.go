// Package task is orch's on-disk task store.
//
// A project is a repository with a .orch directory at its top level:
//
//	.orch/config.toml          project configuration (every key optional)
//	.orch/current              id of the current task
//	.orch/tasks/<id>/          one folder per task
//
// Each task folder holds state.json (the current phase, actor sub-states and
// a revision that grows by one with every change), transcript.jsonl (the
// append-only, hash-chained event log) and a .lock file that is never
// deleted.
//
// transcript.jsonl is a write-ahead log. Task.Commit appends an event that
// carries the next state (and any file moves it implies) with a single
// write(2), fsyncs the log, performs the moves, and only then replaces
// state.json atomically (temporary file in the same folder, fsync, rename,
// fsync of the folder). A crash anywhere in between is repaired by
// Task.Recover, which the caller runs right after taking the lock: it removes
// stray temporary files, truncates a torn last line, and rolls state.json
// forward from the log. Task.Verify recomputes the chain read-only.
//
// # I/O errors
//
// Every write, fsync, rename, truncation, creation and removal goes through
// one file-system seam (fileSystem), which the tests use to fail each of
// them in turn with ENOSPC, EIO, EROFS (once, or from then on) and a short
// write. What holds for every such fault:
//
//   - The call returns an error wrapping the cause; it never reports
//     success. A write that reports fewer bytes is io.ErrShortWrite and is
//     not continued.
//   - A failed fsync is an error and is never retried: after it, the page
//     cache no longer tells what is on the disk, so a second fsync could
//     succeed for data that is lost. The call stops there.
//   - state.json is always a complete, readable file: the old state, or
//     (only after the event was durably logged) the new one.
//   - When the transcript's write or fsync fails, the event is not logged:
//     the log is cut back to its previous length (without another fsync)
//     and state.json, the moves and everything else are untouched. If the
//     cut fails too (a file system gone read-only), Recover fsyncs the log
//     before it rolls state.json forward to that line, so that state.json
//     does not get ahead of what the disk has logged (as far as fsync can
//     tell: the kernel reports a lost write-back only once, to the first
//     fsync after it, which was the failed one).
//   - After the event is durable, a failure in the moves or the state write
//     leaves a logged change that the next Recover completes (the error
//     says so). Moves are idempotent, and folders of moves found done are
//     fsynced again.
//   - CreateTask leaves no task when it fails before the task folder is in
//     place or when tasks/ cannot be fsynced after the rename (the rename is
//     undone); only a failure to replace .orch/current leaves the task,
//     complete, and the error says it was created.
//   - Nothing outside the task folder (for CreateTask and SetCurrent:
//     outside the new folder and .orch/current) is changed; temporary
//     files a failed clean-up leaves are removed by Recover or CleanStrays.
//
// Every method that changes a task (Recover, Commit, Append) must be called
// while holding the task's lock (Task.Lock). Reading (ReadState, Transcript,
// Verify) needs no lock: state.json is only ever replaced atomically.
package task
