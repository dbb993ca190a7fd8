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
// Every method that changes a task (Recover, Commit, Append) must be called
// while holding the task's lock (Task.Lock). Reading (ReadState, Transcript,
// Verify) needs no lock: state.json is only ever replaced atomically.
package task
