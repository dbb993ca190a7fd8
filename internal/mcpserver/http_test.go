package mcpserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/orchdev/orch/internal/exit"
)

func TestCheckAddr(t *testing.T) {
	for _, tc := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8765", false, true},
		{"localhost:0", false, true},
		{"[::1]:8765", false, true},
		{"127.1.2.3:80", false, true},
		{":8765", false, false},
		{"0.0.0.0:8765", false, false},
		{"192.168.1.5:8765", false, false},
		{"example.com:80", false, false},
		{":8765", true, true},
		{"0.0.0.0:8765", true, true},
		{"8765", false, false},
	} {
		err := CheckAddr(tc.addr, tc.remote)
		if (err == nil) != tc.ok {
			t.Errorf("CheckAddr(%q, %v) = %v", tc.addr, tc.remote, err)
		}
		if err != nil && !strings.HasPrefix(exit.Format(err), "orch: --http") {
			t.Errorf("message: %v", err)
		}
	}
}

// bearer adds the token to every request.
type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// TestHTTP: the streamable HTTP transport answers only requests with the
// token; with it, the Go SDK's client lists and calls tools, and the
// action is logged as coming over http.
func TestHTTP(t *testing.T) {
	f := newFixture(t, "")
	f.srv.opt.Transport = "http"
	token, err := NewToken()
	if err != nil || len(token) != 64 {
		t.Fatalf("token %q %v", token, err)
	}
	hs := httptest.NewServer(f.srv.Handler(token))
	defer hs.Close()
	for _, h := range []string{"", "Bearer wrong", "Basic " + token, "Bearer"} {
		req, _ := http.NewRequest("POST", hs.URL+HTTPPath, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if h != "" {
			req.Header.Set("Authorization", h)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: status %d", h, resp.StatusCode)
		}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "http-host", Version: "2"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + HTTPPath,
		HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: ToolNewTask, Arguments: map[string]any{"brief": "over http", "id": "h1"}})
	if err != nil || res.IsError {
		t.Fatalf("new_task over http: %v %v", err, res)
	}
	calls := f.events("h1", "mcp_call")
	if len(calls) != 1 || calls[0].Data["transport"] != "http" || calls[0].Data["client"] != "http-host 2" {
		t.Errorf("mcp_call: %v", calls)
	}
}
