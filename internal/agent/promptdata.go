package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/config"
)

// DataBlock wraps untrusted text (a brief, a file, a review) for a
// prompt. The closing tag carries a hash of the content, so the content
// cannot close the block early by quoting a tag.
func DataBlock(name, content string) string {
	sum := sha256.Sum256([]byte(content))
	tag := hex.EncodeToString(sum[:6])
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	return fmt.Sprintf("<data name=%q tag=%q>\n%s</data tag=%q>\n", name, tag, content, tag)
}

// Wrap adds context to err: "<context>: <message>".
func Wrap(context string, err error) error { return fmt.Errorf("%s: %w", context, err) }

// IndentJSON renders v as indented JSON with a final newline, the form of
// every JSON artifact orch writes.
func IndentJSON(v any) ([]byte, error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ContextBudget is what is left of [context] max_context_bytes for the
// repository after the rest of the prompt (at least 4 KiB).
func ContextBudget(cfg config.Config, used int) int {
	total := cfg.Context.MaxContextBytes
	if total <= 0 {
		total = config.Default().Context.MaxContextBytes
	}
	return max(total-used, 4<<10)
}

// DefaultCodeContextBytes is used when the configuration sets no budget.
const DefaultCodeContextBytes = 200_000

// renderFilePlan lists the planned paths with their intent and summary.
func RenderFilePlan(fp artifact.FilePlan) string {
	var b strings.Builder
	for _, f := range fp.Files {
		fmt.Fprintf(&b, "- %s (%s)", f.Path, f.Intent)
		if s := strings.TrimSpace(f.Summary); s != "" {
			fmt.Fprintf(&b, ": %s", s)
		}
		b.WriteString("\n")
	}
	return b.String()
}
