package llm

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchdev/orch/internal/llm/llmtest"
)

// testKey is the API key the tests configure; no error may contain it.
const testKey = "sk-test-9f8e7d6c5b4a3f2e1d0c7d3e"

// fixedNow is the fake clock of the tests.
var fixedNow = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// fixture returns a file under testdata.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fakeAPI is a fake model API answering each request with the next step
// of a script; it records what it received.
type fakeAPI struct {
	srv *llmtest.Server
}

func newFakeAPI(t *testing.T, steps ...http.HandlerFunc) *fakeAPI {
	t.Helper()
	return &fakeAPI{srv: llmtest.NewServer(t, func(w http.ResponseWriter, r *http.Request, req llmtest.Request) {
		if req.N > len(steps) {
			t.Errorf("unexpected request %d to %s", req.N, req.Path)
			http.Error(w, "unexpected request", http.StatusTeapot)
			return
		}
		steps[req.N-1](w, r)
	})}
}

func (f *fakeAPI) received() []llmtest.Request { return f.srv.Requests() }

// jsonAnswer answers with a fixture body and status.
func jsonAnswer(t *testing.T, status int, name string, headers ...string) http.HandlerFunc {
	body := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}
}

// sseAnswer streams a fixture of server-sent events, flushing each event.
func sseAnswer(t *testing.T, name string) http.HandlerFunc {
	body := string(fixture(t, name))
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		flusher, _ := w.(http.Flusher)
		for _, ev := range strings.SplitAfter(body, "\n\n") {
			if ev == "" {
				continue
			}
			_, _ = io.WriteString(w, ev)
			if flusher != nil {
				flusher.Flush()
			}
		}
	}
}

// hangUp closes the connection without answering.
func hangUp(t *testing.T) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hj, ok := w.(http.Hijacker)
		if !ok {
			t.Error("response writer cannot be hijacked")
			return
		}
		conn, _, err := hj.Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		_ = conn.Close()
	}
}

// waitForCancel blocks until the client gives up on the request.
func waitForCancel(started chan<- struct{}) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if started != nil {
			close(started)
		}
		<-r.Context().Done()
	}
}

// sleepRecorder stands in for the retry policy's sleep.
type sleepRecorder struct {
	mu     sync.Mutex
	sleeps []time.Duration
}

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.sleeps = append(s.sleeps, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleepRecorder) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.sleeps...)
}

// testOptions are the options every HTTP provider test uses: the fake
// clock, recorded sleeps and no jitter.
func testOptions(s *sleepRecorder) []Option {
	return []Option{
		WithClock(func() time.Time { return fixedNow }),
		WithSleep(s.sleep),
		WithJitter(func() float64 { return 0 }),
	}
}

// env is a fake environment for New and FromEnvironment.
func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// wantError checks err for a table case: with want "" err must be nil
// (else the test stops); otherwise err must contain want. It reports
// whether the case expected an error, when there is nothing more to check.
func wantError(t *testing.T, err error, want string) bool {
	t.Helper()
	if want != "" {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one containing %q", err, want)
		}
		return true
	}
	if err != nil {
		t.Fatal(err)
	}
	return false
}

// assertNoKey fails when err's text contains the test key.
func assertNoKey(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testKey) {
		t.Fatalf("error text contains the API key: %v", err)
	}
}

// jsonEqual compares two JSON documents semantically.
func jsonEqual(t *testing.T, got any, want string) {
	t.Helper()
	var g, w any
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(gb, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", gb, want)
	}
}
