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
		{"usage", UsageError("orch: bad"), Usage},
		{"refused wrapped", fmt.Errorf("ctx: %w", RefusedError("orch: no")), Refused},
		{"invalid", InvalidError("orch: bad file", errors.New("cause")), Invalid},
		{"gate", GateError("orch: stopped"), Gate},
		{"attempts", AttemptsError("orch: out"), Attempts},
		{"failed", FailedError("orch: 2 failed"), Failed},
		{"sentinel wrapped", fmt.Errorf("lock: %w", busy), Busy},
		{"outermost wins", InvalidError("orch: x", codedCause{}), Invalid},
		{"joined, first wins", errors.Join(errors.New("plain"), RefusedError("r"), UsageError("u")), Refused},
		{"foreign coder", fmt.Errorf("a: %w", codedCause{}), Busy},
		{"kindless error", &Error{Msg: "x"}, Internal},
	} {
		if got := Of(tc.err); got != tc.want {
			t.Errorf("%s: Of = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestErrorIs(t *testing.T) {
	cause := errors.New("cause")
	err := fmt.Errorf("wrap: %w", InvalidError("orch: bad", cause))
	if !errors.Is(err, ErrInvalid) || !errors.Is(err, cause) || errors.Is(err, ErrRefused) {
		t.Errorf("errors.Is on %v does not match its kind and cause only", err)
	}
	if err.Error() != "wrap: orch: bad" {
		t.Errorf("message %q", err.Error())
	}
}
