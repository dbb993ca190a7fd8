// Package lazyre holds regular expressions that are compiled the first
// time they are used, not when the program starts: every orch command
// starts the whole binary, and the test reports' and test runners'
// expressions, compiled at start, were a good part of `orch status`'s
// start-up (README, "Performance"). A Regexp has the methods of
// regexp.Regexp that orch uses; an invalid expression panics on first use
// (each package's tests use theirs).
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use; safe for
// concurrent use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns expr, to be compiled (regexp.MustCompile) on first use.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Get returns the compiled expression.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String returns the source text.
func (r *Regexp) String() string { return r.expr }

func (r *Regexp) MatchString(s string) bool                  { return r.Get().MatchString(s) }
func (r *Regexp) Match(b []byte) bool                        { return r.Get().Match(b) }
func (r *Regexp) FindString(s string) string                 { return r.Get().FindString(s) }
func (r *Regexp) FindStringIndex(s string) []int             { return r.Get().FindStringIndex(s) }
func (r *Regexp) FindStringSubmatch(s string) []string       { return r.Get().FindStringSubmatch(s) }
func (r *Regexp) FindStringSubmatchIndex(s string) []int     { return r.Get().FindStringSubmatchIndex(s) }
func (r *Regexp) FindAllString(s string, n int) []string     { return r.Get().FindAllString(s, n) }
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int { return r.Get().FindAllStringIndex(s, n) }
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Get().FindAllStringSubmatch(s, n)
}
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Get().ReplaceAllString(src, repl)
}
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.Get().ReplaceAllLiteralString(src, repl)
}
func (r *Regexp) ReplaceAll(src, repl []byte) []byte { return r.Get().ReplaceAll(src, repl) }
func (r *Regexp) SubexpNames() []string              { return r.Get().SubexpNames() }
