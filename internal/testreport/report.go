// Package testreport turns what test runners print or write into
// artifact cases: `go test -json` streams (GoParser), JUnit XML
// (ParseJUnit), libtest's output of `cargo test` (LibtestParser), Python
// unittest's output (UnittestParser), and TAP or the summaries of node's
// spec reporter, Jest, Mocha, Vitest and AVA (TAPParser). Every parser
// reads untrusted input: it bounds what it keeps (BoundedBuf, MaxMessage),
// never fails on malformed text, and is fuzzed.
//
// Finding and reading report files on disk, and running the suites, is
// the job of package testrun.
package testreport

import (
	"errors"

	"github.com/orchdev/orch/internal/artifact"
)

// Case statuses.
const (
	StatusPass  = "pass"
	StatusFail  = "fail"
	StatusSkip  = "skip"
	StatusError = "error"
)

// ErrNotJUnit is returned by ParseJUnit when the input has no
// <testsuites> or <testsuite> root element.
var ErrNotJUnit = errors.New("not a JUnit XML report")

// Summarize counts cases by status.
func Summarize(cases []artifact.Case) artifact.Summary {
	var s artifact.Summary
	for _, c := range cases {
		switch c.Status {
		case StatusPass:
			s.Passed++
		case StatusFail:
			s.Failed++
		case StatusSkip:
			s.Skipped++
		default:
			s.Error++
		}
	}
	return s
}

// Add returns a+b.
func Add(a, b artifact.Summary) artifact.Summary {
	return artifact.Summary{Passed: a.Passed + b.Passed, Failed: a.Failed + b.Failed, Skipped: a.Skipped + b.Skipped, Error: a.Error + b.Error}
}
