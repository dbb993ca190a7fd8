package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchdev/orch/internal/clip"
)

// Retry policy of the HTTP providers.
const (
	backoffBase = time.Second
	backoffMax  = 30 * time.Second
	// maxRetryAfter is the longest Retry-After honoured; a server asking
	// for a longer wait gets no retry and the error says how long it asked.
	maxRetryAfter = 2 * time.Minute
	// maxErrorMessage bounds the server text kept in an APIError.
	maxErrorMessage = 500
)

// httpCore holds what the openai and anthropic providers share: identity,
// key, timeout and the retry policy.
type httpCore struct {
	name       string
	keyEnv     string
	key        string
	timeout    time.Duration
	maxRetries int
	opts       options
}

// attemptFunc makes one request. emitted reports whether any token reached
// Request.OnToken, in which case a failure is not retried (the caller has
// already seen part of an answer).
type attemptFunc func(ctx context.Context) (resp Response, emitted bool, err error)

// run calls attempt under the per-call timeout, retrying what the policy
// allows.
func (c *httpCore) run(parent context.Context, attempt attemptFunc) (Response, error) {
	ctx, cancel := context.WithTimeout(parent, c.timeout)
	defer cancel()
	start := c.opts.now()
	for n := 1; ; n++ {
		resp, emitted, err := attempt(ctx)
		if err == nil {
			resp.Provider = c.name
			resp.Latency = c.opts.now().Sub(start)
			return resp, nil
		}
		if cerr := c.contextError(parent, ctx); cerr != nil {
			return Response{}, cerr
		}
		if errors.Is(err, context.DeadlineExceeded) {
			// An SDK's own request timeout, which mirrors ours.
			return Response{}, &TimeoutError{Provider: c.name, Timeout: c.timeout}
		}
		setAttempts(err, n)
		delay, retry := c.retryDelay(err, n)
		if !retry || emitted || n > c.maxRetries {
			return Response{}, err
		}
		if serr := c.opts.sleep(ctx, delay); serr != nil {
			if cerr := c.contextError(parent, ctx); cerr != nil {
				return Response{}, cerr
			}
			return Response{}, fmt.Errorf("provider %s: wait before retry: %w", c.name, serr)
		}
	}
}

// contextError reports a cancelled caller or an expired per-call timeout.
func (c *httpCore) contextError(parent, ctx context.Context) error {
	if err := parent.Err(); err != nil {
		return fmt.Errorf("provider %s: call abandoned: %w", c.name, context.Cause(parent))
	}
	if ctx.Err() != nil {
		return &TimeoutError{Provider: c.name, Timeout: c.timeout}
	}
	return nil
}

func setAttempts(err error, n int) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.Attempts = n
	}
	var connErr *ConnectionError
	if errors.As(err, &connErr) {
		connErr.Attempts = n
	}
}

// retryDelay decides whether the n-th failed attempt is retried and after
// how long.
func (c *httpCore) retryDelay(err error, n int) (time.Duration, bool) {
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if !apiErr.Retryable() {
			return 0, false
		}
		if apiErr.RetryAfter > 0 {
			return apiErr.RetryAfter, apiErr.RetryAfter <= maxRetryAfter
		}
		return c.backoff(n), true
	}
	var connErr *ConnectionError
	if errors.As(err, &connErr) {
		return c.backoff(n), true
	}
	return 0, false
}

// backoff is exponential in n with jitter in the upper half of the range.
func (c *httpCore) backoff(n int) time.Duration {
	d := backoffBase
	for i := 1; i < n && d < backoffMax; i++ {
		d *= 2
	}
	d = min(d, backoffMax)
	j := c.opts.jitter()
	if j < 0 || j >= 1 {
		j = 0
	}
	return d/2 + time.Duration(float64(d/2)*j)
}

// statusError turns an HTTP error answer into a *KeyError (401, 403) or an
// *APIError carrying the server's message and its Retry-After.
func (c *httpCore) statusError(status int, header http.Header, message string) error {
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		return &KeyError{Provider: c.name, EnvVar: c.keyEnv, Rejected: true, StatusCode: status}
	}
	return &APIError{
		Provider:   c.name,
		StatusCode: status,
		Message:    clip.Bytes(redact(strings.TrimSpace(message), c.key), maxErrorMessage),
		RetryAfter: parseRetryAfter(header, c.opts.now()),
	}
}

// transportError wraps a failure below HTTP (refused connection, reset,
// broken stream) as a retryable *ConnectionError.
func (c *httpCore) transportError(err error) error {
	return &ConnectionError{Provider: c.name, Msg: clip.Bytes(redact(err.Error(), c.key), maxErrorMessage), Err: err}
}

// otherError classifies an SDK error that is not an HTTP error status:
// a transport failure is a *ConnectionError (retried); anything else,
// such as a 200 answer that is not JSON, a *ProtocolError (not retried).
func (c *httpCore) otherError(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var urlErr *url.Error
	var netErr net.Error
	if errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) {
		return c.transportError(err)
	}
	return &ProtocolError{Provider: c.name, Msg: "unexpected answer", Err: errors.New(clip.Bytes(redact(err.Error(), c.key), maxErrorMessage))}
}

// parseRetryAfter reads retry-after-ms (OpenAI) or Retry-After in seconds
// or as an HTTP date; 0 when absent or unreadable.
func parseRetryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		// The comparisons are written so that NaN fails them.
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < float64(24*time.Hour/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if !(secs > 0 && secs <= float64(24*time.Hour/time.Second)) {
			return 0 // also NaN
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
