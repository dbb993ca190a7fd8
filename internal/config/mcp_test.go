package config

import (
	"errors"
	"strings"
	"testing"
)

func TestMCPAllow(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		allows     []string
		refuses    []string
		err        string
	}{
		{"default: no gate", ``, nil, MCPGates, ""},
		{"accept only", "[mcp]\nallow = [\"accept\"]\n", []string{"accept"}, []string{"revert", "override", "redo"}, ""},
		{"every gate", "[mcp]\nallow = [\"accept\", \"revert\", \"override\", \"redo\"]\n", MCPGates, nil, ""},
		{"unknown gate", "[mcp]\nallow = [\"accept\", \"merge\"]\n", nil, nil, `mcp.allow[1]: expected one of accept, revert, override, redo, got "merge"`},
		{"unknown key", "[mcp]\nallowed = [\"accept\"]\n", nil, nil, `did you mean "allow"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := Parse("config.toml", []byte(tc.text))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range tc.allows {
				if !cfg.MCP.Allows(g) {
					t.Errorf("%s not allowed", g)
				}
			}
			for _, g := range tc.refuses {
				if cfg.MCP.Allows(g) {
					t.Errorf("%s allowed", g)
				}
			}
		})
	}
}
