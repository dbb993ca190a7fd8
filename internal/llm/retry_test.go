package llm

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/exit"
)

func TestParseRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header []string
		want   time.Duration
	}{
		{"none", nil, 0},
		{"seconds", []string{"Retry-After", "7"}, 7 * time.Second},
		{"fractional seconds", []string{"Retry-After", "0.25"}, 250 * time.Millisecond},
		{"date", []string{"Retry-After", fixedNow.Add(30 * time.Second).Format(http.TimeFormat)}, 30 * time.Second},
		{"date in the past", []string{"Retry-After", fixedNow.Add(-time.Minute).Format(http.TimeFormat)}, 0},
		{"milliseconds win", []string{"Retry-After-Ms", "1500", "Retry-After", "9"}, 1500 * time.Millisecond},
		{"bad milliseconds fall back", []string{"Retry-After-Ms", "soon", "Retry-After", "9"}, 9 * time.Second},
		{"negative", []string{"Retry-After", "-3"}, 0},
		{"absurd", []string{"Retry-After", "1e300"}, 0},
		{"garbage", []string{"Retry-After", "later"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for i := 0; i+1 < len(tc.header); i += 2 {
				h.Set(tc.header[i], tc.header[i+1])
			}
			if got := parseRetryAfter(h, fixedNow); got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		jitter float64
		want   []time.Duration
	}{
		{0, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 15 * time.Second, 15 * time.Second}},
		{0.5, []time.Duration{750 * time.Millisecond, 1500 * time.Millisecond, 3 * time.Second, 6 * time.Second, 12 * time.Second, 22500 * time.Millisecond, 22500 * time.Millisecond}},
		{7, []time.Duration{500 * time.Millisecond}}, // out-of-range jitter is ignored
	} {
		c := &httpCore{opts: options{jitter: func() float64 { return tc.jitter }}}
		for i, want := range tc.want {
			if got := c.backoff(i + 1); got != want {
				t.Errorf("jitter %v attempt %d: %v, want %v", tc.jitter, i+1, got, want)
			}
		}
	}
}

func TestRunStopsWhenSleepIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &httpCore{
		name: "p", timeout: time.Minute, maxRetries: 3,
		opts: options{
			now:    func() time.Time { return fixedNow },
			jitter: func() float64 { return 0 },
			sleep: func(ctx context.Context, d time.Duration) error {
				cancel() // Ctrl-C during the backoff
				return ctx.Err()
			},
		},
	}
	calls := 0
	_, err := c.run(ctx, func(ctx context.Context) (Response, bool, error) {
		calls++
		return Response{}, false, &APIError{Provider: "p", StatusCode: 503}
	})
	if !errors.Is(err, context.Canceled) || calls != 1 {
		t.Errorf("error %v after %d calls, want context.Canceled after 1", err, calls)
	}
}

func TestSleepContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleep in a cancelled context: %v", err)
	}
	if err := sleepContext(context.Background(), 0); err != nil {
		t.Errorf("zero sleep: %v", err)
	}
	if err := sleepContext(context.Background(), time.Microsecond); err != nil {
		t.Errorf("short sleep: %v", err)
	}
}

func TestErrorTexts(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&KeyError{Provider: "openai", EnvVar: "OPENAI_API_KEY"}, "orch: provider openai: environment variable OPENAI_API_KEY is not set"},
		{&KeyError{Provider: "openai", EnvVar: "K", Rejected: true, StatusCode: 401}, "orch: provider openai: the API key in environment variable K was rejected (HTTP 401 Unauthorized); check the key and its permissions"},
		{&KeyError{Provider: "vllm", Rejected: true, StatusCode: 401}, "orch: provider vllm: the server requires an API key (HTTP 401 Unauthorized) and none is configured; name the environment variable holding it in the provider's configuration"},
		{&APIError{Provider: "p", StatusCode: 503, Message: "busy", Attempts: 4}, "orch: provider p: HTTP 503 Service Unavailable: busy (after 4 attempts)"},
		{&TimeoutError{Provider: "p", Timeout: 5 * time.Minute}, "orch: provider p: no answer within 5m0s; raise the provider's timeout or try again"},
		{&RefusalError{Provider: "p"}, "orch: provider p: the model refused to answer"},
		{&CommandError{Provider: "p", Command: "m", Status: 2, Stderr: "boom\n"}, "orch: provider p: command m exited with status 2; stderr:\nboom"},
		{&ScriptExhaustedError{Provider: "script", File: "s.json", Role: "planner", Used: 2}, `orch: provider script: script s.json has no answer left for role "planner" (2 given); add entries with that role to its "responses" list`},
	} {
		if got := exit.Format(tc.err); got != tc.want { // as orch prints it
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}

func TestShortenAndRedact(t *testing.T) {
	if got := clip.Bytes("héllo", 2); got != "h…" {
		t.Errorf("shorten cut inside a rune: %q", got)
	}
	if got := clip.Bytes("abc", 3); got != "abc" {
		t.Errorf("shorten changed a short string: %q", got)
	}
	if got := redact("key sk-1 and sk-1", "sk-1"); got != "key [REDACTED] and [REDACTED]" {
		t.Errorf("redact: %q", got)
	}
	if got := redact("text", ""); got != "text" {
		t.Errorf("redact with no secret: %q", got)
	}
}
