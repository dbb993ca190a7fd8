package agent

import "strings"

// MarkdownLine keeps text on one line: newlines become spaces, and characters
// that would start Markdown structure are escaped where it matters.
func MarkdownLine(s string) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "\r", " ")), " ")
	return strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(s)
}

// MarkdownCell is pmdLine for a table cell: '|' is escaped too.
func MarkdownCell(s string) string { return strings.ReplaceAll(MarkdownLine(s), "|", `\|`) }

// MarkdownCode makes s safe inside a `code span`.
func MarkdownCode(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "`", "'")
}
