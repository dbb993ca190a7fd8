// Package artifact loads, validates and describes the files agents and
// people leave in a task folder (docs/artifacts.md).
//
// Everything read here is treated as hostile input. The JSON artifacts are
// read with package strictjson: the top level must be an object, object keys must be
// unique at every level, nesting is limited to MaxDepth levels, the bytes
// must be valid UTF-8 (and no string may escape a lone UTF-16 surrogate,
// which decoders silently turn into U+FFFD) and nothing may follow the
// JSON value. Each artifact is
// then checked field by field against the contract, and a failure is
// reported as an *Error that names the task-relative file, the JSON path
// ($.questions[2].blocking), what was expected and what was found. Fields
// the contract does not name are allowed and ignored.
//
// Paths that end up in the repository (file plans, code/files, diff.patch)
// must pass CheckPath (package safepath). ScanCodeFiles never follows
// symbolic links and LoadDiff reads code/diff.patch with package patch, which
// refuses symlinks, submodules, mode changes and binary patches, so that
// nothing applied later can escape the repository or smuggle in a link.
//
// Every file is size-checked with a stat before it is opened and then read
// through an io.LimitReader, so an oversized artifact is refused without
// being read whole. The limits are MaxJSONBytes, MaxDiffBytes,
// MaxCodeFileBytes and MaxCodeFiles.
package artifact
