// Package codegen does the codegen phase: the codegen role edits the
// planned files (with tools, or in one answer of edits, files and deletes),
// every write inside the reviewed file plan, optionally running the tests;
// orch then stages the files and computes code/diff.patch with git.
package codegen
