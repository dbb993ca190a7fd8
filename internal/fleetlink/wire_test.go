package fleetlink

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/lifecycle"
)

// TestDecodeFailure maps a failed run of orch-fleet (exit code, stderr)
// to the error a person sees: orch-fleet's own message, hints and exit
// code when it reported a Failure, else what it printed, with its code.
func TestDecodeFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		code   int
		stderr string
		want   string // exit.Format of the error
	}{
		{"refused gate", 3, `{"error":"task 0001-x is in accept, not planning: answer needs planning","hints":["run: orch accept"],"exit_code":3}` + "\n",
			"orch: task 0001-x is in accept, not planning: answer needs planning\nrun: orch accept"},
		{"two hints", 4, `{"error":"bad","hints":["first","second"],"exit_code":4}`, "orch: bad\nfirst\nsecond"},
		{"no hints", 2, `{"error":"no fleet: set [fleet] address","exit_code":2}`, "orch: no fleet: set [fleet] address"},
		{"failure after other lines", 5, "warming up\n" + `{"error":"task is busy","exit_code":5}` + "\n", "orch: task is busy"},
		{"code disagrees", 1, `{"error":"refused","exit_code":3}`, `orch: orch-fleet status failed (exit 1): {"error":"refused","exit_code":3}`},
		{"plain text", 3, "orch: refused here\n", "orch: orch-fleet status failed (exit 3): refused here"},
		{"panic", 2, "panic: boom\n\ngoroutine 1 [running]:\nmain.main()\n", "orch: orch-fleet status failed (exit 2): panic: boom\n\ngoroutine 1 [running]:\nmain.main()"},
		{"nothing", 1, "", "orch: orch-fleet status failed (exit 1): no message"},
		{"unknown field", 3, `{"error":"x","exit_code":3,"extra":1}`, `orch: orch-fleet status failed (exit 3): {"error":"x","exit_code":3,"extra":1}`},
		{"empty message", 3, `{"error":"","exit_code":3}`, `orch: orch-fleet status failed (exit 3): {"error":"","exit_code":3}`},
		{"code of no kind", 42, `{"error":"odd","exit_code":42}`, "orch: odd"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := decodeFailure("status", tc.code, []byte(tc.stderr))
			if got := exit.Format(err); got != tc.want {
				t.Fatalf("Format = %q\nwant       %q", got, tc.want)
			}
			if got := exit.Of(err); int(got) != tc.code {
				t.Fatalf("exit code %d, want %d", got, tc.code)
			}
		})
	}
}

// TestFailureRoundTrip: an error of orch's, reported by orch-fleet as a
// Failure and decoded by the link, is shown exactly as orch-fleet shows
// it, with the same code.
func TestFailureRoundTrip(t *testing.T) {
	for _, err := range []error{
		exit.New(exit.ErrRefused, "task %s is in %s", "0001-x", lifecycle.Accept).WithHint("run: orch accept --verdict accepted --reason R"),
		exit.New(exit.ErrUsage, "blank reason").WithHint("a").WithHint("b"),
		exit.New(exit.ErrBusy, "locked"),
		exit.New(exit.ErrInvalid, "outer: %w", exit.New(exit.ErrInvalid, "inner").WithHint("inner hint")).WithHint("outer hint"),
	} {
		line, merr := json.Marshal(FailureOf(err))
		if merr != nil {
			t.Fatal(merr)
		}
		got := decodeFailure("accept", int(exit.Of(err)), append(line, '\n'))
		if exit.Format(got) != exit.Format(err) || exit.Of(got) != exit.Of(err) {
			t.Fatalf("decoded %q (exit %d), want %q (exit %d)", exit.Format(got), exit.Of(got), exit.Format(err), exit.Of(err))
		}
	}
}

// TestDecodeAnswers decodes orch-fleet's answers and refuses what is not
// one of them.
func TestDecodeAnswers(t *testing.T) {
	status := `{"task":"0001-x","phase":"accept","revision":12,"updated_at":"2026-11-27T10:00:00Z","actors":{},"edges":[],"suggested":null,"reason":"waits for the accept decision","run":"orch accept"}`
	s, err := decodeStatus([]byte(status + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Task != "0001-x" || s.Phase != lifecycle.Accept || s.Revision != 12 || s.Run != "orch accept" || string(s.Raw) != status {
		t.Fatalf("status decoded as %+v", s)
	}
	for _, bad := range []string{"", "null", "{}", `{"task":"0001-x"}`, status + status, status + " x", `{"task":"0001-x","phase":"accept","bogus":1}`, "[1]"} {
		if _, err := decodeStatus([]byte(bad)); err == nil {
			t.Errorf("decodeStatus(%q) = nil error", bad)
		}
	}

	log := `{"seq":1,"ts":"2026-11-27T10:00:00Z","kind":"created","state":{"phase":"planning","revision":1},"prev":""}
{"seq":2,"ts":"2026-11-27T10:01:00Z","kind":"transition","from":"planning","to":"plan_review","reason":"plan valid","prev":"ab"}
`
	evs, err := decodeLog([]byte(log))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Seq != 1 || evs[1].Kind != "transition" || evs[1].Prev != "ab" {
		t.Fatalf("log decoded as %+v", evs)
	}
	if evs, err := decodeLog(nil); err != nil || len(evs) != 0 {
		t.Fatalf("empty log: %v, %v", evs, err)
	}
	for _, bad := range []string{"{", `{"seq":1}`, "1", `{"seq":1,"kind":"created"} x`} {
		if _, err := decodeLog([]byte(bad)); err == nil {
			t.Errorf("decodeLog(%q) = nil error", bad)
		}
	}

	var l Listing
	if err := decodeOne("list", []byte(`{"phases":{"accept":[{"task":"0001-x","revision":3,"waiting":"the accept decision"}]},"workers":{"orch-model":["a:1"]}}`), &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Phases[lifecycle.Accept]) != 1 || l.Phases[lifecycle.Accept][0].Waiting != "the accept decision" || l.Workers["orch-model"][0] != "a:1" {
		t.Fatalf("listing decoded as %+v", l)
	}
	var g GateResult
	if err := decodeOne("accept", []byte(`{"task":"0001-x","phase":"done","revision":4,"commit":"abc"}`), &g); err != nil || g.Phase != lifecycle.Done || g.Commit != "abc" {
		t.Fatalf("gate result %+v, %v", g, err)
	}
	if err := decodeOne("accept", []byte(`{"task":"0001-x"}{"task":"0002-y"}`), &g); err == nil || !strings.Contains(err.Error(), "more than one JSON value") {
		t.Fatalf("two values: %v", err)
	}
}

// FuzzDecode feeds arbitrary process output to every decoder of the link:
// none panics; a decoded status has its task and phase and its Raw is
// valid JSON; a failure always keeps the process's exit code.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"task":"0001-x","phase":"accept","revision":1}`), 3)
	f.Add([]byte(`{"error":"refused","hints":["h"],"exit_code":3}`+"\n"), 3)
	f.Add([]byte(`{"seq":1,"ts":"2026-11-27T10:00:00Z","kind":"created","prev":""}`), 1)
	f.Add([]byte(`{"phases":{"test":[{"task":"a","revision":1}]},"workers":{}}`), 0)
	f.Add([]byte("orch: refused\n"), 255)
	f.Fuzz(func(t *testing.T, data []byte, code int) {
		if s, err := decodeStatus(data); err == nil {
			if s.Task == "" || s.Phase == "" || !json.Valid(s.Raw) {
				t.Fatalf("status %+v from %q", s, data)
			}
		}
		if evs, err := decodeLog(data); err == nil {
			for _, ev := range evs {
				if ev.Kind == "" {
					t.Fatalf("event without kind from %q", data)
				}
			}
		}
		var l Listing
		_ = decodeOne("list", data, &l)
		var g GateResult
		_ = decodeOne("accept", data, &g)
		code = 1 + (code%255+255)%255 // a failed process's code: 1..255
		err := decodeFailure("status", code, data)
		if err == nil || int(exit.Of(err)) != code || !strings.HasPrefix(exit.Format(err), exit.Prefix) {
			t.Fatalf("decodeFailure(%d, %q) = %v (exit %d)", code, data, err, exit.Of(err))
		}
	})
}
