package agent

import (
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"text/template"
)

//go:embed prompts/*.md
var embedded embed.FS

// PromptsDir is where users override prompts: .orch/prompts/<name>.md.
const PromptsDir = "prompts"

// Prompt renders prompt name with data. A file .orch/prompts/<name>.md
// replaces the embedded one. Prompts are text/template templates.
func (rt *Runtime) Prompt(name string, data any) (string, error) {
	var text []byte
	override := filepath.Join(rt.Project.OrchDir(), PromptsDir, name+".md")
	if b, err := os.ReadFile(override); err == nil {
		text = b
	} else if !os.IsNotExist(err) {
		return "", fmt.Errorf("read prompt %s: %w", override, err)
	} else if text, err = embedded.ReadFile("prompts/" + name + ".md"); err != nil {
		return "", fmt.Errorf("no prompt named %q: %w", name, err)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return "", fmt.Errorf("prompt %s: %w", name, err)
	}
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", fmt.Errorf("prompt %s: %w", name, err)
	}
	return b.String(), nil
}
