package board

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/event"
	"github.com/orchdev/orch/internal/lifecycle"
	"github.com/orchdev/orch/internal/orchestrator"
	"github.com/orchdev/orch/internal/task"
)

// BenchmarkChangeToEvent measures how long a change made by the CLI's
// code (a transition of a task) takes to reach the board's subscribers:
// the live update's latency, with notifications and with polling.
func BenchmarkChangeToEvent(b *testing.B) {
	for _, poll := range []bool{false, true} {
		b.Run(map[bool]string{false: "notify", true: "poll"}[poll], func(b *testing.B) {
			f := NewFixture(b)
			f.Task("b1", "bench")
			w := newWatcher(f.P.TasksDir())
			w.forcePoll = poll
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); w.run(ctx) }()
			defer func() { cancel(); <-done }()
			<-w.ready
			sub, stop := w.subscribe()
			defer stop()
			reason := "bench"
			var total time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var err error
				if i%2 == 0 {
					_, err = f.O.Next(ctx, "b1", orchestrator.NextRequest{Override: &reason})
				} else {
					_, err = f.O.Redo(ctx, "b1", lifecycle.Planning, reason)
				}
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for got := false; !got; {
					<-sub.wake
					for _, id := range sub.take() {
						got = got || id == "b1"
					}
				}
				total += time.Since(start)
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms-to-event")
		})
	}
}

// BenchmarkBoardPage renders the board over 100 tasks spread over the
// phases: warm, as a refresh finds it (the cards' cache holds every task);
// cold, with the cards' cache in memory emptied before each page, as the
// first page of `orch serve` (the cards' cache file and the observation
// caches on disk stay); changed, after a model call was appended to every
// task's transcript (the CPU of appending them is not counted).
func BenchmarkBoardPage(b *testing.B) {
	f := NewFixture(b)
	reason := "bench"
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("t%03d", i)
		f.Task(id, "task "+id)
		f.Plan(id, "Task "+id, "", nil)
		if to := lifecycle.Phases()[i%6]; to != lifecycle.Planning {
			if _, err := f.O.Next(context.Background(), id, orchestrator.NextRequest{To: to, Override: &reason}); err != nil {
				b.Fatal(err)
			}
		}
	}
	s, _ := f.Board(Options{})
	b.Run("warm", func(b *testing.B) { benchPage(b, s, "/", nil) })
	b.Run("cold", func(b *testing.B) {
		benchPage(b, s, "/", func() {
			s.states.flush()
			s.states = cardStates{path: s.states.path, saveEvery: s.states.saveEvery}
			s.costs = costTails{}
		})
	})
	b.Run("changed", func(b *testing.B) {
		usd := 0.01
		benchPage(b, s, "/", func() {
			for i := 0; i < 100; i++ {
				t, err := f.P.Open(fmt.Sprintf("t%03d", i))
				if err == nil {
					err = t.Append(task.NewEvent(event.ModelCall{Phase: "planning", Role: "planner", Provider: "test", Model: "m", TokensIn: 10, TokensOut: 1, CostUSD: &usd}))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// benchPage serves path from s's handler b.N times (calling each, when
// not nil, before each page, its CPU time not counted) with the board's
// cookie; any answer but 200 fails the benchmark. It reports the CPU time
// per page (user and system, of this process and of the git processes it
// waited for, from rusage): on a shared machine the wall time mostly
// measures the other work.
func benchPage(b *testing.B, s *Server, path string, each func()) {
	h := s.Handler()
	b.ResetTimer()
	before := cpuTime()
	var setup time.Duration
	defer func() {
		b.ReportMetric(float64((cpuTime()-before-setup).Microseconds())/float64(b.N)/1000, "cpu-ms/op")
	}()
	for i := 0; i < b.N; i++ {
		if each != nil {
			start := cpuTime()
			each()
			setup += cpuTime() - start
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", path, nil)
		req.Host = s.opt.Addr
		req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code)
		}
	}
}

// cpuTime is the CPU time used so far by this process and its waited-for
// children.
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	ns := func(r syscall.Rusage) int64 { return r.Utime.Nano() + r.Stime.Nano() }
	return time.Duration(ns(self) + ns(children))
}

// BenchmarkTaskPage renders the page of a task waiting for its accept
// decision (plan, reviews, diff, report, evidence, timeline).
func BenchmarkTaskPage(b *testing.B) {
	f := NewFixture(b)
	f.Task("a", "accept me")
	f.ToAccept("a", "Accept me")
	s, _ := f.Board(Options{})
	benchPage(b, s, "/task/a", nil)
}
