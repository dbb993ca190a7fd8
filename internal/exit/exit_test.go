package exit

import (
	"errors"
	"fmt"
	"testing"
)

type codedCause struct{}

func (codedCause) Error() string  { return "busy" }
func (codedCause) ExitCode() Code { return Busy }

func TestOf(t *testing.T) {
	busy := NewSentinel(Busy, "task is busy")
	for _, tc := range []struct {
		name string
		err  error
		want Code
	}{
		{"nil", nil, OK},
		{"plain", errors.New("boom"), Internal},
		{"usage", New(ErrUsage, "bad"), Usage},
		{"refused wrapped", fmt.Errorf("ctx: %w", New(ErrRefused, "no")), Refused},
		{"invalid with a cause", New(ErrInvalid, "bad file: %w", errors.New("cause")), Invalid},
		{"busy", New(ErrBusy, "locked"), Busy},
		{"gate", New(ErrGate, "stopped"), Gate},
		{"attempts", New(ErrAttempts, "out"), Attempts},
		{"provider", New(ErrProvider, "no key"), Provider},
		{"failed", New(ErrFailed, "2 failed"), Failed},
		{"internal kind", New(ErrInternal, "odd"), Internal},
		{"a package's own kind", New(busy, "held by pid 7"), Busy},
		{"with a hint", fmt.Errorf("a: %w", New(ErrRefused, "no").WithHint("run x")), Refused},
		{"sentinel wrapped", fmt.Errorf("lock: %w", busy), Busy},
		{"outermost wins", New(ErrInvalid, "x: %w", codedCause{}), Invalid},
		{"a plain wrapper of a coded cause", New(ErrInternal, "x: %w", codedCause{}), Internal},
		{"joined, first wins", errors.Join(errors.New("plain"), New(ErrRefused, "r"), New(ErrUsage, "u")), Refused},
		{"two causes, the first coded wins", New(ErrInvalid, "%w and %w", New(ErrUsage, "u"), codedCause{}), Invalid},
		{"foreign coder", fmt.Errorf("a: %w", codedCause{}), Busy},
		{"kindless error", &Error{Msg: "x"}, Internal},
		{"KindOf", New(KindOf(Gate), "x"), Gate},
		{"KindOf an unknown code", New(KindOf(42), "x"), Internal},
	} {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("%s: Of = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestErrorIs(t *testing.T) {
	cause := errors.New("cause")
	other := errors.New("other")
	mine := NewSentinel(Usage, "no such task")
	for _, tc := range []struct {
		name    string
		err     error
		is, not []error
	}{
		{"kind and cause", fmt.Errorf("wrap: %w", New(ErrInvalid, "bad: %w", cause)), []error{ErrInvalid, cause}, []error{ErrRefused, other}},
		{"no cause", New(ErrRefused, "no %s", "way"), []error{ErrRefused}, []error{cause, ErrInvalid}},
		{"two causes", New(ErrInvalid, "%w; %w", cause, other), []error{ErrInvalid, cause, other}, []error{ErrUsage}},
		{"own kind", New(mine, "task x"), []error{mine}, []error{ErrUsage}},
		{"hint keeps kind and cause", New(ErrInvalid, "bad: %w", cause).WithHint("h"), []error{ErrInvalid, cause}, nil},
	} {
		for _, target := range tc.is {
			if !errors.Is(tc.err, target) {
				t.Errorf("%s: errors.Is(%v, %v) = false", tc.name, tc.err, target)
			}
		}
		for _, target := range tc.not {
			if errors.Is(tc.err, target) {
				t.Errorf("%s: errors.Is(%v, %v) = true", tc.name, tc.err, target)
			}
		}
	}
}

func TestMessageAndFormat(t *testing.T) {
	cause := errors.New("open a.json: no such file")
	for _, tc := range []struct {
		name       string
		err        error
		msg, shown string
	}{
		{"plain error", errors.New("boom"), "boom", "orch: boom"},
		{"formatted", New(ErrUsage, "unknown phase %q", "x"), `unknown phase "x"`, `orch: unknown phase "x"`},
		{"cause in the message", New(ErrInvalid, "plan: %w", cause), "plan: open a.json: no such file", "orch: plan: open a.json: no such file"},
		{"wrapped once more: one prefix", fmt.Errorf("task 7: %w", New(ErrInvalid, "plan: %w", cause)), "task 7: plan: open a.json: no such file", "orch: task 7: plan: open a.json: no such file"},
		{"hint on its own line", New(ErrRefused, "task 7 is in review, not test").WithHint("run: orch review"), "task 7 is in review, not test", "orch: task 7 is in review, not test\nrun: orch review"},
		{"two hints", New(ErrRefused, "no").WithHint("a").WithHint("b %d", 2), "no", "orch: no\na\nb 2"},
		{"hints of the chain, outermost first, once", New(ErrRefused, "outer: %w", New(ErrInvalid, "inner").WithHint("inner hint")).WithHint("outer hint"),
			"outer: inner", "orch: outer: inner\nouter hint\ninner hint"},
		{"the same hint twice shows once", fmt.Errorf("%w; %w", New(ErrUsage, "a").WithHint("h"), New(ErrUsage, "b").WithHint("h")), "a; b", "orch: a; b\nh"},
		{"nil", nil, "", ""},
	} {
		if tc.err != nil {
			if got := tc.err.Error(); got != tc.msg {
				t.Errorf("%s: Error() = %q, want %q", tc.name, got, tc.msg)
			}
		}
		if got := Format(tc.err); got != tc.shown {
			t.Errorf("%s: Format = %q, want %q", tc.name, got, tc.shown)
		}
	}
}

// TestWithHintCopies: a hint added to an error value does not change the
// value it was added to (a package-level error stays as declared).
func TestWithHintCopies(t *testing.T) {
	base := New(ErrUsage, "bad")
	_ = base.WithHint("h")
	if base.Hint != "" {
		t.Errorf("WithHint changed its receiver: hint %q", base.Hint)
	}
}
