package board

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Every refusal of the access control, and that a refused POST changes
// nothing.
func TestRefusals(t *testing.T) {
	f := NewFixture(t)
	f.Task("t1", "a task")
	s, ts := f.Board(Options{})
	cookie := &http.Cookie{Name: s.guard.cookie, Value: s.Token()}
	// wrong is the CSRF token with its first character changed (never
	// equal to it, whatever character the random token starts with).
	wrong := map[bool]string{true: "y", false: "x"}[s.guard.csrf[0] == 'x'] + s.guard.csrf[1:]
	form := func(csrf string) string {
		v := url.Values{"reason": {"skip"}}
		if csrf != "" {
			v.Set(csrfField, csrf)
		}
		return v.Encode()
	}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		host   string
		cookie *http.Cookie
		origin string
		body   string
		want   int
		says   string
	}{
		{name: "no token", method: "GET", path: "/", want: 401, says: "needs its token"},
		{name: "no token, task page", method: "GET", path: "/task/t1", want: 401, says: "needs its token"},
		{name: "no token, events", method: "GET", path: "/events", want: 401},
		{name: "no token, static", method: "GET", path: "/static/board.js", want: 401},
		{name: "wrong cookie", method: "GET", path: "/", cookie: &http.Cookie{Name: s.guard.cookie, Value: "guess"}, want: 401},
		{name: "wrong token in the URL", method: "GET", path: "/?token=guess", want: 403, says: "wrong token"},
		{name: "foreign Host", method: "GET", path: "/", host: "evil.example:80", cookie: cookie, want: 421, says: "only to its own address"},
		{name: "foreign Host with the token", method: "GET", path: "/?token=" + s.Token(), host: "rebound.example", want: 421},
		{name: "POST without CSRF", method: "POST", path: "/task/t1/override", cookie: cookie, body: form(""), want: 403, says: "CSRF"},
		{name: "POST with a wrong CSRF", method: "POST", path: "/task/t1/override", cookie: cookie, body: form(wrong), want: 403, says: "CSRF"},
		{name: "POST with the token as CSRF", method: "POST", path: "/task/t1/override", cookie: cookie, body: form(s.Token()), want: 403},
		{name: "POST from another site", method: "POST", path: "/task/t1/override", cookie: cookie, origin: "http://evil.example", body: form(s.guard.csrf), want: 403, says: "another site"},
		{name: "POST without the cookie", method: "POST", path: "/task/t1/override", body: form(s.guard.csrf), want: 401},
		{name: "GET cannot act", method: "GET", path: "/task/t1/override?reason=x", cookie: cookie, want: 405},
		{name: "PUT", method: "PUT", path: "/task/t1/next", cookie: cookie, want: 405},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, ts.URL+tc.path, strings.NewReader(tc.body))
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.cookie != nil {
				req.AddCookie(tc.cookie)
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			code, body := do(t, req)
			if code != tc.want {
				t.Fatalf("status %d, want %d: %s", code, tc.want, body)
			}
			if tc.says != "" && !strings.Contains(body, tc.says) {
				t.Errorf("body %q does not say %q", body, tc.says)
			}
			if strings.Contains(body, "<") {
				t.Errorf("a refusal is plain text, got %q", body)
			}
		})
	}
	// Nothing moved: every POST above was an override.
	if p := f.Phase("t1"); p != "planning" {
		t.Fatalf("phase %s after refused overrides, want planning", p)
	}
	// The same override with the CSRF token is carried out: the refusals
	// above were the checks, not a broken action.
	code, _, _ := post(t, s, ts, "/task/t1/override", url.Values{"reason": {"skip"}})
	if code != http.StatusSeeOther {
		t.Fatalf("override with CSRF: status %d", code)
	}
	if p := f.Phase("t1"); p != "plan_review" {
		t.Fatalf("phase %s after the override, want plan_review", p)
	}
}

// The printed URL's token becomes a strict, HttpOnly cookie and leaves the
// address bar; the cookie then opens every page.
func TestTokenCookie(t *testing.T) {
	f := NewFixture(t)
	s, ts := f.Board(Options{})
	res, err := client().Get(ts.URL + "/task/x?token=" + url.QueryEscape(s.Token()))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/task/x" {
		t.Fatalf("status %d, Location %q; want 303 to /task/x", res.StatusCode, res.Header.Get("Location"))
	}
	var c *http.Cookie
	for _, k := range res.Cookies() {
		if k.Name == s.guard.cookie {
			c = k
		}
	}
	if c == nil || c.Value != s.Token() || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" {
		t.Fatalf("cookie %+v: want the token, HttpOnly, SameSite=Strict, Path=/", c)
	}
	if code, _ := get(t, s, ts, "/"); code != 200 {
		t.Fatalf("board with the cookie: %d", code)
	}
	// The redirect that drops the token never leads to another host.
	for _, p := range []string{"//evil.example/x", "/\\evil.example"} {
		res, err := client().Get(ts.URL + p + "?token=" + url.QueryEscape(s.Token()))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || loc != "/" {
			t.Errorf("%s: status %d, Location %q; want 303 to /", p, res.StatusCode, loc)
		}
	}
}

// Every answer carries the strict policy and the other security headers.
func TestSecurityHeaders(t *testing.T) {
	f := NewFixture(t)
	f.Task("t1", "a task")
	s, ts := f.Board(Options{})
	for _, path := range []string{"/", "/task/t1", "/static/board.css", "/nope"} {
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.AddCookie(&http.Cookie{Name: s.guard.cookie, Value: s.Token()})
		res, err := client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		h := res.Header
		if h.Get("Content-Security-Policy") != contentSecurityPolicy {
			t.Errorf("%s: CSP %q", path, h.Get("Content-Security-Policy"))
		}
		for k, v := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"} {
			if h.Get(k) != v {
				t.Errorf("%s: %s = %q, want %q", path, k, h.Get(k), v)
			}
		}
	}
	for _, bad := range []string{"'unsafe-inline'", "'unsafe-eval'", "http:", "https:", "*"} {
		if strings.Contains(contentSecurityPolicy, bad) {
			t.Errorf("the policy allows %s", bad)
		}
	}
}

func TestHosts(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		loopback bool
		accept   []string
		refuse   []string
	}{
		{"127.0.0.1:7777", true, []string{"127.0.0.1:7777", "localhost:7777", "LOCALHOST:7777"}, []string{"127.0.0.1:7778", "evil.example:7777", "localhost", "127.0.0.1"}},
		{"[::1]:80", true, []string{"[::1]:80", "localhost:80"}, []string{"[::1]:81", "example.com:80"}},
		{"localhost:9", true, []string{"localhost:9", "127.0.0.1:9"}, []string{"localhost.evil:9"}},
		{"192.0.2.7:7777", false, []string{"192.0.2.7:7777"}, []string{"localhost:7777", "attacker.example:7777"}},
		{"0.0.0.0:7777", false, []string{"127.0.0.1:7777"}, []string{"attacker.example:7777"}},
	} {
		hosts, err := Hosts(tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		g := newGuard("t", hosts, "1")
		for _, h := range tc.accept {
			if !g.hosts[strings.ToLower(h)] {
				t.Errorf("%s: Host %s refused, want accepted (hosts %v)", tc.addr, h, hosts)
			}
		}
		for _, h := range tc.refuse {
			if g.hosts[strings.ToLower(h)] {
				t.Errorf("%s: Host %s accepted, want refused", tc.addr, h)
			}
		}
		if Loopback(tc.addr) != tc.loopback {
			t.Errorf("Loopback(%s) = %v", tc.addr, !tc.loopback)
		}
	}
}
