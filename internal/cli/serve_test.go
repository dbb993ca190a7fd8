package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenBrowser: $BROWSER's commands are tried in turn, "%s" stands for
// the URL (else it is the last argument); when none can be started the
// error names each, and `orch serve` prints it as a warning.
func TestOpenBrowser(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "browser")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nprintf '%s|' \"$@\" > \"$0.out\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const url = "http://127.0.0.1:7777/?token=abc"
	for _, tc := range []struct{ browser, want string }{
		{script, url + "|"},
		{script + " --new-window", "--new-window|" + url + "|"},
		{script + " --url=%s --x", "--url=" + url + "|--x|"},
		{filepath.Join(dir, "missing") + "::" + script, url + "|"},
	} {
		os.Remove(script + ".out")
		env := map[string]string{"BROWSER": tc.browser}
		if err := openBrowser(func(k string) string { return env[k] }, url); err != nil {
			t.Fatalf("BROWSER=%q: %v", tc.browser, err)
		}
		var got []byte
		for i := 0; i < 200 && len(got) == 0; i++ { // the browser runs on its own
			got, _ = os.ReadFile(script + ".out")
			time.Sleep(20 * time.Millisecond)
		}
		if string(got) != tc.want {
			t.Errorf("BROWSER=%q: the browser got %q, want %q", tc.browser, got, tc.want)
		}
	}
	missing := filepath.Join(dir, "missing")
	err := openBrowser(func(k string) string { return map[string]string{"BROWSER": missing + ":" + missing + "2"}[k] }, url)
	if err == nil || !strings.Contains(err.Error(), missing) || !strings.Contains(err.Error(), missing+"2") {
		t.Errorf("no browser could start: err = %v, want one naming both commands", err)
	}
}
