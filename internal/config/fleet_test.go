package config

import (
	"errors"
	"strings"
	"testing"
)

// TestFleet checks [fleet]: absent means no fleet; every key but address
// needs address; the address is HOST:PORT; the API key is named by an
// environment variable, never written; mutual TLS needs both files.
func TestFleet(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		configured bool
		err        string
	}{
		{"absent", ``, false, ""},
		{"local server", "[fleet]\naddress = \"127.0.0.1:7233\"\n", true, ""},
		{"cloud", "[fleet]\naddress = \"ns.acct.tmprl.cloud:7233\"\nnamespace = \"ns.acct\"\napi_key_env = \"TEMPORAL_API_KEY\"\n", true, ""},
		{"mutual tls", "[fleet]\naddress = \"t.internal:7233\"\ntls = true\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\nca_file = \"ca.pem\"\n", true, ""},
		{"namespace without address", "[fleet]\nnamespace = \"default\"\n", false, `fleet.namespace: set without fleet.address`},
		{"tls without address", "[fleet]\ntls = true\n", false, `fleet.tls: set without fleet.address`},
		{"address without port", "[fleet]\naddress = \"localhost\"\n", false, `fleet.address: expected HOST:PORT`},
		{"address as a URL", "[fleet]\naddress = \"http://localhost:7233\"\n", false, `fleet.address: expected HOST:PORT`},
		{"key instead of its name", "[fleet]\naddress = \"h:7233\"\napi_key_env = \"abc=def\"\n", false, `fleet.api_key_env: expected the NAME of an environment variable`},
		{"cert without key", "[fleet]\naddress = \"h:7233\"\ntls = true\ncert_file = \"c.pem\"\n", false, `fleet.cert_file: expected cert_file and key_file together`},
		{"ca without tls", "[fleet]\naddress = \"h:7233\"\nca_file = \"ca.pem\"\n", false, `fleet.tls: expected tls = true`},
		{"binary", "[fleet]\naddress = \"127.0.0.1:7233\"\nbinary = \"bin/orch-fleet\"\n", true, ""},
		{"binary without address", "[fleet]\nbinary = \"bin/orch-fleet\"\n", false, `fleet.binary: set without fleet.address`},
		{"unknown key", "[fleet]\nadress = \"h:7233\"\n", false, `did you mean "address"?`},
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
			if cfg.Fleet.Configured() != tc.configured {
				t.Fatalf("Configured() = %v, want %v", cfg.Fleet.Configured(), tc.configured)
			}
		})
	}
}
