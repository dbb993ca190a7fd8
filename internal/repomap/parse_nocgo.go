//go:build !cgo

package repomap

import (
	"context"
	"errors"
)

// DefinitionsAvailable reports whether this build indexes the definitions
// of every parsed language. Tree-sitter needs cgo: without it only Go
// files' definitions are indexed (go/parser, godefs.go), and the map
// ranks the other files by paths, git grep and identifier references.
const DefinitionsAvailable = false

var errParseLimit = errors.New("parse took too long")

type extractor struct{}

func newExtractor() *extractor { return &extractor{} }

func (e *extractor) close() {}

// definitions finds a Go file's definitions with go/parser; a Go file
// with a syntax error (which tree-sitter would index) and the other
// languages get none, and errNoParser, so that the index file marks them
// for a build with tree-sitter to parse again.
func (e *extractor) definitions(_ context.Context, l Lang, src []byte) ([]Def, error) {
	if l == LangGo {
		if defs, ok := goDefinitions(src); ok {
			return defs, nil
		}
	}
	return nil, errNoParser
}
