package config

import (
	"strings"
	"testing"
)

func TestUnknownKeyNamesTheTablesKeys(t *testing.T) {
	for _, tc := range []struct {
		name, toml, key string
		want            []string
	}{
		{"provider typo", "[providers.default]\ntype = \"command\"\ncommnd = [\"x\"]\n", "providers.default.commnd",
			[]string{`unknown key (did you mean "command"?)`, "[providers.default] knows: ", "api_key_env", "command", "script"}},
		{"table typo", "[tset]\nsandbox = \"none\"\n", "tset",
			[]string{`unknown table (did you mean "test"?)`, "the top level knows: ", "budgets", "providers", "tools"}},
		{"test key", "[test]\nsandboxx = \"none\"\n", "test.sandboxx",
			[]string{`did you mean "sandbox"?`, "[test] knows: ", "env_allow", "read_only_paths"}},
		{"suite key", "[[test.suites]]\nname = \"unit\"\ncommand = \"go test ./...\"\nformt = \"go-json\"\n", "test.suites.formt",
			[]string{`did you mean "format"?`, "[test.suites] knows: ", "report", "timeout"}},
		{"phase budget", "[budgets.phase.codegen]\ncals = 3\n", "budgets.phase.codegen.cals",
			[]string{`did you mean "calls"?`, "[budgets.phase.codegen] knows: ", "cost_usd", "wall_time"}},
		{"nothing close", "[review]\nzzzzzzzz = 1\n", "review.zzzzzzzz",
			[]string{"unknown key; [review] knows: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tc.toml))
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.key+":") {
				t.Errorf("%q does not name the key %s", msg, tc.key)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("%q lacks %q", msg, w)
				}
			}
		})
	}
}
