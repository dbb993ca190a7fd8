// Package llmtest holds the fake model API that tests talk to over HTTP:
// an httptest server that records every request (its number, method, path,
// headers and body) and lets the test answer it. The fakes of OpenAI's and
// Anthropic's APIs in llm's, the agents' and the CLI's tests are built on
// it; the answers they write speak the providers' real wire formats. Only
// tests import it.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Request is one request the server received.
type Request struct {
	N      int // 1 for the first request
	Method string
	Path   string
	Header http.Header
	Raw    []byte         // the body as sent
	Body   map[string]any // the body decoded; nil when it is not a JSON object
}

// Server is a running fake API; URL is its address.
type Server struct {
	URL string

	t      testing.TB
	answer func(w http.ResponseWriter, r *http.Request, req Request)

	mu   sync.Mutex
	reqs []Request
}

// NewServer starts a server that records each request and then calls
// answer with it; the server is closed when the test ends. A body that is
// not a JSON object fails the test (every model API takes one); answer
// still runs.
func NewServer(t testing.TB, answer func(w http.ResponseWriter, r *http.Request, req Request)) *Server {
	t.Helper()
	s := &Server{t: t, answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Raw: data}
	if err := json.Unmarshal(data, &req.Body); err != nil {
		s.t.Errorf("request body to %s is not a JSON object: %v: %s", r.URL.Path, err, data)
	}
	s.mu.Lock()
	req.N = len(s.reqs) + 1
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	s.answer(w, r, req)
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// JSON answers with status and v encoded as JSON.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
