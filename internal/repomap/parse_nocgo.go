//go:build !cgo

package repomap

import (
	"context"
	"errors"
)

// DefinitionsAvailable reports whether this build indexes definitions with
// tree-sitter (it needs cgo; without it the map ranks by paths, git grep
// and identifier references only).
const DefinitionsAvailable = false

var errParseLimit = errors.New("parse took too long")

type extractor struct{}

func newExtractor() *extractor { return &extractor{} }

func (e *extractor) close() {}

func (e *extractor) definitions(context.Context, Lang, []byte) ([]Def, error) { return nil, nil }
