package board

import (
	"embed"
	"io/fs"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// The diff's highlighting uses chroma's lexers for the languages below, its
// own XML definitions copied into lexers/ (chroma's licence is
// lexers/COPYING) and its Go lexer's rules in goLexer, registered the first
// time a diff is highlighted. chroma's lexers package registers all of its
// ~280 lexers when a program that links it starts, which every orch
// command paid (README, "Performance"); a file of another language is shown
// without colours.
//
//go:embed lexers/*.xml
var lexerFiles embed.FS

// lexerRegistry builds the registry once, on first use.
var lexerRegistry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(lexerFiles, "lexers/*.xml")
	if err != nil {
		panic(err)
	}
	for _, p := range paths {
		reg.Register(chroma.MustNewXMLLexer(lexerFiles, p))
	}
	reg.Register(goLexer())
	return reg
})

// matchLexer returns the lexer for a file's name, nil when none.
func matchLexer(name string) chroma.Lexer {
	return lexerRegistry().Match(name)
}

// goLexer is chroma's Go lexer (its lexers/go.go, MIT licence, see
// lexers/COPYING), without the template highlighting inside raw strings.
func goLexer() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{
		Name:      "Go",
		Aliases:   []string{"go", "golang"},
		Filenames: []string{"*.go"},
		MimeTypes: []string{"text/x-gosrc"},
	}, goRules).SetAnalyser(func(text string) float32 {
		if strings.Contains(text, "fmt.") && strings.Contains(text, "package ") {
			return 0.5
		}
		if strings.Contains(text, "package ") {
			return 0.1
		}
		return 0.0
	})
}

func goRules() chroma.Rules {
	w := chroma.Words
	return chroma.Rules{
		"root": {
			{Pattern: `\n`, Type: chroma.TextWhitespace},
			{Pattern: `\s+`, Type: chroma.TextWhitespace},
			{Pattern: `//[^\s\n\r][^\n\r]*`, Type: chroma.CommentPreproc},
			{Pattern: `//[^\n\r]*`, Type: chroma.CommentSingle},
			{Pattern: `/(\\\n)?[*](.|\n)*?[*](\\\n)?/`, Type: chroma.CommentMultiline},
			{Pattern: `(import|package)\b`, Type: chroma.KeywordNamespace},
			{Pattern: `(var|func|struct|map|chan|type|interface|const)\b`, Type: chroma.KeywordDeclaration},
			{Pattern: w(``, `\b`, `break`, `default`, `select`, `case`, `defer`, `go`, `else`, `goto`, `switch`, `fallthrough`, `if`, `range`, `continue`, `for`, `return`), Type: chroma.Keyword},
			{Pattern: `(true|false|iota|nil)\b`, Type: chroma.KeywordConstant},
			{Pattern: w(``, `\b(\()`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `print`, `println`, `panic`, `recover`, `close`, `complex`, `real`, `imag`, `len`, `cap`, `append`, `copy`, `delete`, `new`, `make`, `clear`, `min`, `max`), Type: chroma.ByGroups(chroma.NameBuiltin, chroma.Punctuation)},
			{Pattern: w(``, `\b`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `any`), Type: chroma.KeywordType},
			{Pattern: `\d+i`, Type: chroma.LiteralNumber},
			{Pattern: `\d+\.\d*([Ee][-+]\d+)?i`, Type: chroma.LiteralNumber},
			{Pattern: `\.\d+([Ee][-+]\d+)?i`, Type: chroma.LiteralNumber},
			{Pattern: `\d+[Ee][-+]\d+i`, Type: chroma.LiteralNumber},
			{Pattern: `\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`, Type: chroma.LiteralNumberFloat},
			{Pattern: `\.\d+([eE][+\-]?\d+)?`, Type: chroma.LiteralNumberFloat},
			{Pattern: `0[0-7]+`, Type: chroma.LiteralNumberOct},
			{Pattern: `0[xX][0-9a-fA-F_]+`, Type: chroma.LiteralNumberHex},
			{Pattern: `0b[01_]+`, Type: chroma.LiteralNumberBin},
			{Pattern: `(0|[1-9][0-9_]*)`, Type: chroma.LiteralNumberInteger},
			{Pattern: `'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`, Type: chroma.LiteralStringChar},
			{Pattern: "`[^`]*`", Type: chroma.LiteralString},
			{Pattern: `"(\\\\|\\"|[^"])*"`, Type: chroma.LiteralString},
			{Pattern: `(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`, Type: chroma.Operator},
			{Pattern: `([a-zA-Z_]\w*)(\s*)(\()`, Type: chroma.ByGroups(chroma.NameFunction, chroma.UsingSelf("root"), chroma.Punctuation)},
			{Pattern: `[|^<>=!()\[\]{}.,;:~]`, Type: chroma.Punctuation},
			{Pattern: `[^\W\d]\w*`, Type: chroma.NameOther},
		},
	}
}
