package agent_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/repomap/synthetic"
	"github.com/orchdev/orch/internal/task"
)

// The synthetic repository of the repository map's benchmark (100,000
// files, repomap/synthetic) end to end against the scripted model of the
// cobra benchmark: a one-line change (a Go function's doc comment) through
// planning, five plan reviewers, codegen and four code reviewers. It
// reports the CPU and wall time of each task's four phases — the first
// with an empty index cache (the repository map is built), then warm — and
// the tokens each phase sends and receives:
//
//	go test -run '^$' -bench SyntheticChange -benchtime 1x -timeout 60m ./internal/agent
//
// ORCH_BENCH_FILES sets another size. TestSyntheticChangeTokens runs the
// same on 400 files in the ordinary test run.

// syntheticChange rewords the doc comment of the first function of file 3
// (a Go file) of the synthetic repository.
func syntheticChange() benchChange {
	fn := synthetic.FuncName(3, 0)
	return benchChange{
		brief: fmt.Sprintf("Reword the doc comment of %s: it does step 0 of the configuration.", fn),
		title: "Reword " + fn + "'s doc comment", accept: fn + "'s doc comment names the configuration",
		summary: "reword " + fn + "'s doc comment",
		path:    synthetic.Path(3), symbol: fn,
		old: fmt.Sprintf("// %s does step 0.", fn), new: fmt.Sprintf("// %s does step 0 of the configuration.", fn),
		line: 10,
	}
}

// syntheticProject writes the synthetic repository of n files and runs
// orch init in it.
func syntheticProject(tb testing.TB, n int) *task.Project {
	root := tb.TempDir()
	if err := synthetic.Write(root, n); err != nil {
		tb.Fatal(err)
	}
	p, _, err := task.InitProject(root)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func BenchmarkSyntheticChange(b *testing.B) {
	n := synthetic.Files()
	start := time.Now()
	p := syntheticProject(b, n)
	b.Logf("synthetic repository of %d files written in %s", n, time.Since(start).Round(time.Second))
	ch := syntheticChange()
	task := 0
	for _, run := range []struct{ name, mode string }{
		{"tools-first-index", "tools"}, {"tools-warm", "tools"}, {"edits-warm", "edits"},
	} {
		b.Run(run.name, func(b *testing.B) {
			var bt benchTokens
			cpu0, wall0 := synthetic.CPUTime(), time.Now()
			for range b.N {
				task++
				bt = runChange(b, p, fmt.Sprintf("t%d", task), ch, run.mode)
			}
			b.ReportMetric((synthetic.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(time.Since(wall0).Seconds()/float64(b.N), "wall-s/op")
			totalIn := 0
			for _, ph := range []string{"planning", "plan_review", "codegen", "review"} {
				b.ReportMetric(float64(bt.in[ph]), ph+"-in-tok")
				totalIn += bt.in[ph]
			}
			b.ReportMetric(float64(totalIn), "total-in-tok")
		})
	}
}

// TestSyntheticChangeTokens keeps the benchmark from rotting: the change
// goes through on a 400-file synthetic repository in both modes, and every
// phase's prompts stay within a bound that does not grow with the
// repository (the map is budgeted, tools read what they need).
func TestSyntheticChangeTokens(t *testing.T) {
	p := syntheticProject(t, 400)
	ch := syntheticChange()
	tooled := runChange(t, p, "t1", ch, "tools")
	single := runChange(t, p, "t2", ch, "edits")
	// Without tools each request carries up to [context]
	// max_context_bytes of repository (about a quarter as many tokens)
	// besides the prompt; with tools a phase's turns stay far below that.
	perRequest := config.Default().Context.MaxContextBytes/4 + 4_000
	for ph, requests := range map[string]int{"planning": 1, "plan_review": 5, "codegen": 1, "review": 4} {
		if tooled.in[ph] == 0 || single.in[ph] == 0 {
			t.Errorf("%s sent nothing: tools %d, edits %d", ph, tooled.in[ph], single.in[ph])
		}
		if bound := requests * perRequest; single.in[ph] > bound {
			t.Errorf("%s sent %d tokens without tools, over %d", ph, single.in[ph], bound)
		}
		if bound := 60_000; tooled.in[ph] > bound {
			t.Errorf("%s sent %d tokens with tools, over %d", ph, tooled.in[ph], bound)
		}
	}
	t.Logf("tools: %v; edits: %v", tooled.in, single.in)
}
