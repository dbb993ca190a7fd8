package testrun

import (
	"encoding/json"
	"fmt"
	"strings"
)

// DotFolderNotes names the JavaScript test runners of the repository at
// dir that search dot folders (Jest and Vitest by default), and says how to
// keep .orch/ out of them. Without that, a run of the user's own (npm
// test, an editor's test explorer) also finds orch's copies of changed test
// files under .orch/tasks/*/code/files/. orch's own runs never see them:
// they run in a worktree without .orch/. A package.json that cannot be
// read or parsed gives no note: detection at `orch test` reports it.
func DotFolderNotes(dir string) []string {
	d := detector{dir: dir}
	data, ok, err := d.read("package.json")
	if err != nil || !ok {
		return nil
	}
	var pkg struct {
		Jest            json.RawMessage   `json:"jest"`
		Scripts         map[string]any    `json:"scripts"`
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	if json.Unmarshal(data, &pkg) != nil {
		return nil
	}
	uses := func(runner string, configs ...string) bool {
		if _, ok := pkg.Dependencies[runner]; ok {
			return true
		}
		if _, ok := pkg.DevDependencies[runner]; ok {
			return true
		}
		for _, s := range pkg.Scripts {
			if s, ok := s.(string); ok && strings.Contains(s, runner) {
				return true
			}
		}
		for _, c := range configs {
			for _, ext := range []string{"js", "mjs", "cjs", "ts", "mts", "cts", "json"} {
				if d.exists(c + "." + ext) {
					return true
				}
			}
		}
		return false
	}
	var notes []string
	const copies = "or your own runs also run orch's copies of changed tests under .orch/tasks/*/code/files/ (orch test itself runs without .orch/)"
	if len(pkg.Jest) > 0 || uses("jest", "jest.config") {
		notes = append(notes, fmt.Sprintf(`Jest searches dot folders: add "<rootDir>/.orch/" to testPathIgnorePatterns and modulePathIgnorePatterns in your Jest configuration (keep "/node_modules/" in the first), %s`, copies))
	}
	if uses("vitest", "vitest.config", "vitest.workspace") {
		notes = append(notes, fmt.Sprintf(`Vitest searches dot folders: add "**/.orch/**" to test.exclude in your Vitest configuration (as [...configDefaults.exclude, "**/.orch/**"]), %s`, copies))
	}
	return notes
}
