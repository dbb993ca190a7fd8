package testrun

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDotFolderNotes: Jest and Vitest, found by a dependency, a script, a
// "jest" key or a configuration file, each get the note that keeps .orch/
// out of them; other projects, a broken package.json and a missing one get
// none.
func TestDotFolderNotes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  []string // one substring per note, in order
	}{
		{"jest dev dependency", map[string]string{"package.json": `{"devDependencies":{"jest":"^29"}}`}, []string{`"<rootDir>/.orch/" to testPathIgnorePatterns and modulePathIgnorePatterns`}},
		{"jest key", map[string]string{"package.json": `{"jest":{"verbose":true}}`}, []string{"Jest searches dot folders"}},
		{"jest script", map[string]string{"package.json": `{"scripts":{"test":"jest --ci"}}`}, []string{"Jest searches dot folders"}},
		{"jest config file", map[string]string{"package.json": `{}`, "jest.config.ts": "export default {}"}, []string{"Jest searches dot folders"}},
		{"vitest", map[string]string{"package.json": `{"devDependencies":{"vitest":"^2"}}`}, []string{`"**/.orch/**" to test.exclude`}},
		{"vitest config", map[string]string{"package.json": `{}`, "vitest.config.mts": ""}, []string{"Vitest searches dot folders"}},
		{"both", map[string]string{"package.json": `{"dependencies":{"vitest":"2"},"scripts":{"legacy":"jest"}}`}, []string{"Jest", "Vitest"}},
		{"mocha", map[string]string{"package.json": `{"devDependencies":{"mocha":"^10"},"scripts":{"test":"mocha"}}`}, nil},
		{"node test runner", map[string]string{"package.json": `{"scripts":{"test":"node --test"}}`}, nil},
		{"broken package.json", map[string]string{"package.json": `{"devDependencies":`}, nil},
		{"no package.json", map[string]string{"go.mod": "module x\n", "jest.config.js": ""}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := DotFolderNotes(dir)
			if len(got) != len(tc.want) {
				t.Fatalf("notes %q, want %d", got, len(tc.want))
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) || !strings.Contains(got[i], ".orch/tasks/*/code/files/") {
					t.Errorf("note %d = %q, want it to contain %q and name orch's copies", i, got[i], w)
				}
			}
		})
	}
}
