package mcpserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/orchdev/orch/internal/exit"
)

// HTTPPath is where the streamable HTTP transport is served.
const HTTPPath = "/mcp"

// MinTokenBytes bounds a token given through the environment.
const MinTokenBytes = 16

// NewToken returns a random bearer token (32 bytes, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// CheckAddr accepts a listen address on a loopback interface; any other
// address (":8080", "0.0.0.0:8080", a LAN address) needs allowRemote.
func CheckAddr(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return exit.New(exit.ErrUsage, "--http %q: expected HOST:PORT (127.0.0.1:8765, localhost:0): %v", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil && ip.IsLoopback() {
		return nil
	}
	return exit.New(exit.ErrUsage, "--http %q listens beyond this machine (host %q is not a loopback address): use 127.0.0.1:PORT, or add --allow-remote if you mean it (the token is then all that guards the project)", addr, host)
}

// Handler serves the streamable HTTP transport at HTTPPath to requests
// carrying "Authorization: Bearer <token>", with the SDK's DNS-rebinding
// protection and Go's cross-origin protection.
func (s *Server) Handler(token string) http.Handler {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp }, nil)
	protected := http.NewCrossOriginProtection().Handler(h)
	mux := http.NewServeMux()
	mux.Handle(HTTPPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !bearerOK(r.Header.Get("Authorization"), token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="orch mcp"`)
			http.Error(w, exit.Prefix+"missing or wrong bearer token: send the header Authorization: Bearer <token> that orch mcp --http printed", http.StatusUnauthorized)
			return
		}
		protected.ServeHTTP(w, r)
	}))
	return mux
}

// bearerOK compares the request's bearer token in constant time.
func bearerOK(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok || token == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// ServeHTTP serves the project over ln until ctx is done, watching the
// artifacts for changes meanwhile.
func (s *Server) ServeHTTP(ctx context.Context, ln net.Listener, token string) error {
	hs := &http.Server{Handler: s.Handler(token), ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.Watch(ctx)
	go func() {
		<-ctx.Done()
		sctx, c := context.WithTimeout(context.Background(), 5*time.Second)
		defer c()
		_ = hs.Shutdown(sctx)
	}()
	err := hs.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
