package cli

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/task"
)

// TestConfigTemplate checks that the commented template orch init writes
// parses as it is, and that uncommenting every key gives a valid
// configuration equal to the defaults it documents.
func TestConfigTemplate(t *testing.T) {
	p, _, err := task.InitProject(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := config.Load(p.Dir); err != nil {
		t.Fatalf("the template as written: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(p.Dir, config.FileName))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "# ") && (strings.Contains(l, " = ") || strings.HasPrefix(l, "# [")) {
			lines = append(lines, strings.TrimPrefix(l, "# "))
		}
	}
	cfg, err := config.Parse("uncommented", []byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatalf("the template uncommented:\n%s\n%v", strings.Join(lines, "\n"), err)
	}
	def := config.Default()
	if len(cfg.Context.AllowPaths) == 0 {
		cfg.Context.AllowPaths = nil // the template's "allow_paths = []"
	}
	if cfg.Test.Sandbox != def.Test.Sandbox || cfg.Test.Timeout != def.Test.Timeout || !reflect.DeepEqual(cfg.Context, def.Context) ||
		cfg.Test.MaxProcesses != def.Test.MaxProcesses || cfg.Test.MaxMemory != def.Test.MaxMemory || cfg.Budgets.Task() != def.Budgets.Task() ||
		strings.Join(cfg.Review.PlanPersonas, ",") != strings.Join(def.Review.PlanPersonas, ",") {
		t.Errorf("the template documents values other than the defaults: %+v", cfg)
	}
}
