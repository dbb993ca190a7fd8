package board

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// The security headers of every answer. The policy allows only the
// board's own script and style sheet (no inline script or style, no
// eval), forms posting to the board, and connections back to it (the
// server-sent events); nothing from the network, no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// tokenParam is the query parameter of the printed URL that carries the
// token; the board moves it into a cookie and redirects to drop it.
const tokenParam = "token"

// csrfField is the form field (and header) carrying the CSRF token.
const csrfField = "csrf"

// newSecret returns 32 random bytes, URL-safe base64.
func newSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("serve: random token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// guard is the board's access control: the token (from the printed URL,
// then a cookie), the Host header (DNS rebinding), and the CSRF token of
// every POST.
type guard struct {
	token  string
	csrf   string
	cookie string          // the cookie's name, with the port: cookies are not per port
	hosts  map[string]bool // acceptable Host headers, lower case
}

func newGuard(token string, hosts []string, port string) *guard {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("orch serve csrf"))
	g := &guard{token: token, csrf: base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), cookie: "orch_token_" + port, hosts: map[string]bool{}}
	for _, h := range hosts {
		g.hosts[strings.ToLower(h)] = true
	}
	return g
}

// equal compares secrets in constant time.
func equal(a, b string) bool {
	return len(a) == len(b) && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// wrap puts the checks in front of next. The order matters: the Host
// check comes first (a rebound name never gets as far as the token), the
// token second, the CSRF token of a state change last.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if !g.hosts[strings.ToLower(r.Host)] {
			refuse(w, http.StatusMisdirectedRequest, "orch serve: this board answers only to its own address, not to the Host "+fmt.Sprintf("%q", r.Host)+": open the URL orch serve printed")
			return
		}
		if t := r.URL.Query().Get(tokenParam); t != "" && r.Method == http.MethodGet {
			if !equal(t, g.token) {
				refuse(w, http.StatusForbidden, "orch serve: wrong token: open the URL orch serve printed (a new run prints a new token)")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: g.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			// Drop the token from the address bar and the history.
			q := r.URL.Query()
			q.Del(tokenParam)
			p := r.URL.Path
			if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.Contains(p, "\\") {
				p = "/" // never a redirect to another host ("//evil.example")
			}
			u := url.URL{Path: p, RawQuery: q.Encode()}
			http.Redirect(w, r, u.String(), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(g.cookie)
		if err != nil || !equal(c.Value, g.token) {
			refuse(w, http.StatusUnauthorized, "orch serve: this board needs its token: open the URL orch serve printed (http://…/?token=…)")
			return
		}
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPost:
			// A browser names the page a POST comes from; another
			// site's is refused even before the CSRF token is read.
			if o := r.Header.Get("Origin"); o != "" && o != "null" {
				u, err := url.Parse(o)
				if err != nil || !g.hosts[strings.ToLower(u.Host)] {
					refuse(w, http.StatusForbidden, "orch serve: a form from another site (Origin "+fmt.Sprintf("%q", o)+") is refused")
					return
				}
			}
			if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
				refuse(w, http.StatusForbidden, "orch serve: a cross-site request is refused")
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := r.ParseForm(); err != nil {
				refuse(w, http.StatusBadRequest, "orch serve: the form could not be read: "+err.Error())
				return
			}
			if !equal(r.PostForm.Get(csrfField), g.csrf) {
				refuse(w, http.StatusForbidden, "orch serve: the form's CSRF token is missing or wrong: reload the page and submit again")
				return
			}
		default:
			w.Header().Set("Allow", "GET, HEAD, POST")
			refuse(w, http.StatusMethodNotAllowed, "orch serve: method "+r.Method+" is not allowed")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxFormBytes bounds a POSTed form (an answer, reasons).
const maxFormBytes = 1 << 20

// refuse answers a refused request with plain text (never HTML: nothing
// of the request is ever interpreted by the browser).
func refuse(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintln(w, msg)
}

// Hosts returns the Host headers a board bound to addr answers to: the
// address itself and, on loopback, localhost with its port. A wildcard
// address (0.0.0.0, ::) answers to every address of the machine's
// interfaces and to its host name: never to another name, which is what
// a DNS rebinding attack needs.
func Hosts(addr string) ([]string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	out := []string{net.JoinHostPort(host, port)}
	ip := net.ParseIP(host)
	switch {
	case host == "localhost" || ip != nil && ip.IsLoopback():
		out = append(out, net.JoinHostPort("localhost", port), net.JoinHostPort("127.0.0.1", port), net.JoinHostPort("::1", port))
	case ip != nil && ip.IsUnspecified():
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				out = append(out, net.JoinHostPort(n.IP.String(), port))
			}
		}
		if name, err := os.Hostname(); err == nil && name != "" {
			out = append(out, net.JoinHostPort(name, port))
		}
		out = append(out, net.JoinHostPort("localhost", port))
	}
	return out, nil
}

// Loopback reports whether addr's host is a loopback address or
// localhost.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
