package llm

import (
	"context"
	"math/rand/v2"
	"net/http"
	"time"
)

// Option adjusts how New builds a provider; used mainly by tests.
type Option func(*options)

type options struct {
	httpClient *http.Client
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error
	jitter     func() float64
}

// WithHTTPClient sets the HTTP client of the openai and anthropic
// providers; nil keeps http.DefaultClient.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) {
		if c != nil {
			o.httpClient = c
		}
	}
}

// WithClock sets the clock used for latency and for Retry-After dates.
func WithClock(now func() time.Time) Option {
	return func(o *options) {
		if now != nil {
			o.now = now
		}
	}
}

// WithSleep sets how the retry policy waits between attempts. The function
// must return ctx's error promptly when ctx is done.
func WithSleep(sleep func(ctx context.Context, d time.Duration) error) Option {
	return func(o *options) {
		if sleep != nil {
			o.sleep = sleep
		}
	}
}

// WithJitter sets the source of randomness for backoff jitter: a function
// returning a number in [0, 1).
func WithJitter(jitter func() float64) Option {
	return func(o *options) {
		if jitter != nil {
			o.jitter = jitter
		}
	}
}

func buildOptions(opts []Option) options {
	o := options{
		httpClient: http.DefaultClient,
		now:        time.Now,
		sleep:      sleepContext,
		jitter:     rand.Float64,
	}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// sleepContext waits for d or until ctx is done.
func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
