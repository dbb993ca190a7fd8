package llmtest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Requests are numbered and recorded before the answer runs; the answer
// reaches the client.
func TestServerRecordsAndAnswers(t *testing.T) {
	s := NewServer(t, func(w http.ResponseWriter, r *http.Request, req Request) {
		JSON(w, http.StatusCreated, map[string]any{"n": req.N, "model": req.Body["model"]})
	})
	for i, body := range []string{`{"model":"a"}`, `{"model":"b"}`} {
		resp, err := http.Post(s.URL+"/v1/x", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := `{"model":"` + string(rune('a'+i)) + `","n":` + string(rune('1'+i)) + "}\n"
		if resp.StatusCode != http.StatusCreated || string(got) != want || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("answer %d: %d %q, want 201 %q", i, resp.StatusCode, got, want)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[1].N != 2 || reqs[1].Method != http.MethodPost || reqs[1].Path != "/v1/x" ||
		!bytes.Equal(reqs[1].Raw, []byte(`{"model":"b"}`)) || reqs[1].Header.Get("Content-Type") != "application/json" {
		t.Fatalf("recorded %+v", reqs)
	}
}
