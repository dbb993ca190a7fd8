package sandbox

import (
	"testing"
	"unicode/utf8"
)

// TestWarmText: the warm-up's note quotes what go said, not its JSON
// events (recorded from go 1.26 on BurntSushi/toml with a test file that
// does not compile, and on go-logr/logr's _tools module, which has no
// package).
func TestWarmText(t *testing.T) {
	tests := []struct {
		name, out, want string
		noPackages      bool
	}{
		{"a build failure in go test -json",
			`{"ImportPath":"example.com/m/sub2 [example.com/m/sub2.test]","Action":"build-output","Output":"# example.com/m/sub2 [example.com/m/sub2.test]\n"}
{"ImportPath":"example.com/m/sub2 [example.com/m/sub2.test]","Action":"build-output","Output":"sub2/sub_test.go:5:28: undefined: undefined\n"}
{"ImportPath":"example.com/m/sub2 [example.com/m/sub2.test]","Action":"build-fail"}
{"Time":"2026-11-27T21:01:58.420779036Z","Action":"fail","Package":"example.com/m/sub2","Elapsed":0,"FailedBuild":"example.com/m/sub2 [example.com/m/sub2.test]"}
FAIL
`, "# example.com/m/sub2 [example.com/m/sub2.test]\nsub2/sub_test.go:5:28: undefined: undefined\nFAIL", false},
		{"a module without packages", "go: warning: \"./...\" matched no packages\nno packages to test\n",
			"go: warning: \"./...\" matched no packages\nno packages to test", true},
		{"no packages and something else", "go: warning: \"./...\" matched no packages\ngo: downloading example.com/x v1.0.0: no network\n",
			"go: warning: \"./...\" matched no packages\ngo: downloading example.com/x v1.0.0: no network", false},
		{"plain text stays", "go: cannot find main module\n", "go: cannot find main module", false},
		{"a line that only looks like JSON", "{not json}\n", "{not json}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := warmText(tt.out)
			if got != tt.want {
				t.Errorf("warmText =\n%q\nwant\n%q", got, tt.want)
			}
			if goNoPackages(got) != tt.noPackages {
				t.Errorf("goNoPackages(%q) = %v, want %v", got, !tt.noPackages, tt.noPackages)
			}
		})
	}
}

// FuzzWarmText: whatever a warm-up prints (the repository's code decides
// what go prints), warmText does not panic, its text is valid UTF-8 and
// at most three times the output (an invalid byte becomes U+FFFD).
func FuzzWarmText(f *testing.F) {
	f.Add(`{"Action":"build-output","Output":"x.go:1: bad\n"}` + "\nFAIL\n")
	f.Add("go: warning: \"./...\" matched no packages\nno packages to test\n")
	f.Add(`{"Output":null}` + "\n" + `{"Output":"\u001b[31m"}`)
	f.Add("\xff{\n}")
	f.Fuzz(func(t *testing.T, out string) {
		got := warmText(out)
		if !utf8.ValidString(got) {
			t.Fatalf("invalid UTF-8: %q", got)
		}
		if len(got) > 3*len(out) {
			t.Fatalf("text %d bytes from %d", len(got), len(out))
		}
		_ = goNoPackages(got)
	})
}
