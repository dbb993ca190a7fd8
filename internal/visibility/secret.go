package visibility

import (
	"path"
	"strings"
)

// secretRule is one name pattern of files that look like secrets.
type secretRule struct {
	// glob is matched (path.Match) against the lower-cased last element of
	// the path, or, when it contains a '/', against the lower-cased
	// trailing elements of the same count.
	glob string
	why  string
}

// secretRules are the names that look like secrets. The list is
// deliberately broad: a false positive costs a line of configuration
// ([context] allow_paths), a false negative sends a key to a model.
var secretRules = []secretRule{
	// Environment files (dotenv, direnv and "prod.env").
	{".env*", "environment file"},
	{"*.env", "environment file"},
	// Keys, certificates with private keys, key stores.
	{"*.pem", "PEM key or certificate"},
	{"*.key", "private key"},
	{"*.p12", "PKCS#12 key store"},
	{"*.pfx", "PKCS#12 key store"},
	{"*.p8", "PKCS#8 private key"},
	{"*.jks", "Java key store"},
	{"*.keystore", "key store"},
	{"*.ppk", "PuTTY private key"},
	{"*.kdbx", "KeePass database"},
	{"*.keychain", "keychain"},
	{"*.keychain-db", "keychain"},
	{"secring.*", "GnuPG secret key ring"},
	// SSH private keys: id_rsa, id_ed25519, id_ecdsa_sk, deploy_rsa, ...
	{"id_*", "SSH private key"},
	{"*_rsa", "SSH private key"},
	{"*_dsa", "SSH private key"},
	{"*_ecdsa", "SSH private key"},
	{"*_ed25519", "SSH private key"},
	// Credential and secret stores.
	{"credentials*", "credentials file"},
	{".credentials*", "credentials file"},
	{".git-credentials", "git credentials"},
	{"secret", "secrets file"},
	{"secrets", "secrets file"},
	{"secret.*", "secrets file"},
	{"secrets.*", "secrets file"},
	{".secret*", "secrets file"},
	{"*.token", "token file"},
	{".token", "token file"},
	{".vault-token", "Vault token"},
	// Tool configuration that holds passwords or tokens.
	{".npmrc", "npm configuration (auth tokens)"},
	{".yarnrc", "yarn configuration (auth tokens)"},
	{".pypirc", "PyPI configuration (passwords)"},
	{".netrc", "netrc (passwords)"},
	{"_netrc", "netrc (passwords)"},
	{".pgpass", "PostgreSQL passwords"},
	{".my.cnf", "MySQL client configuration (passwords)"},
	{".htpasswd", "htpasswd"},
	{".dockercfg", "Docker registry credentials"},
	{".docker/config.json", "Docker registry credentials"},
	{".s3cfg", "S3 credentials"},
	{".boto", "AWS credentials"},
	{".kube/config", "Kubernetes credentials"},
	{"kubeconfig*", "Kubernetes credentials"},
	// Terraform state and variables hold secrets in clear text.
	{"*.tfstate", "Terraform state"},
	{"*.tfstate.*", "Terraform state"},
	{"*.tfvars", "Terraform variables"},
	{"*.tfvars.json", "Terraform variables"},
}

// secretDirs are folders whose whole content looks secret.
var secretDirs = map[string]string{
	".ssh":   "SSH folder",
	".gnupg": "GnuPG folder",
}

// SecretRule returns why the repository path p looks like a secret (for
// example "*.pem: PEM key or certificate"), or "" when it does not. Names
// are compared case-insensitively. Source files of the common languages
// named like a credential store (credentials.go, secrets.py) match too:
// allow them with [context] allow_paths.
func SecretRule(p string) string {
	lp := strings.ToLower(p)
	for rest := lp; ; {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			break
		}
		if why, ok := secretDirs[rest[:i]]; ok {
			return rest[:i] + "/: " + why
		}
		rest = rest[i+1:]
	}
	base := lp[strings.LastIndexByte(lp, '/')+1:]
	for i, r := range secretRules {
		name := base
		if n := compiledRules[i].slashes; n > 0 {
			// The last n+1 elements.
			at := len(lp)
			for k := 0; k <= n && at >= 0; k++ {
				at = strings.LastIndexByte(lp[:max(at, 0)], '/')
			}
			if at < 0 && strings.Count(lp, "/") < n {
				continue
			}
			name = lp[at+1:]
		}
		if compiledRules[i].match(name) {
			if r.glob == "id_*" && strings.Contains(base, ".") {
				// id_rsa and id_ed25519_sk are keys; id_test.go and
				// id_rsa.pub are not.
				continue
			}
			return r.glob + ": " + r.why
		}
	}
	return ""
}

// compiledRule is a rule's glob sorted by shape once, so that listing a
// repository of 100,000 files does not run path.Match 60 times a file.
type compiledRule struct {
	glob    string
	kind    int // ruleLiteral, rulePrefix, ruleSuffix or ruleGlob
	lit     string
	frags   []string // ruleGlob: the literal parts a match must contain
	slashes int
}

const (
	ruleLiteral = iota
	rulePrefix
	ruleSuffix
	ruleGlob
)

var compiledRules = func() []compiledRule {
	out := make([]compiledRule, len(secretRules))
	for i, r := range secretRules {
		c := compiledRule{glob: r.glob, kind: ruleGlob, slashes: strings.Count(r.glob, "/")}
		if !strings.ContainsAny(r.glob, "?[\\") {
			switch star := strings.Count(r.glob, "*"); {
			case star == 0:
				c.kind, c.lit = ruleLiteral, r.glob
			case star == 1 && strings.HasSuffix(r.glob, "*"):
				c.kind, c.lit = rulePrefix, strings.TrimSuffix(r.glob, "*")
			case star == 1 && strings.HasPrefix(r.glob, "*"):
				c.kind, c.lit = ruleSuffix, strings.TrimPrefix(r.glob, "*")
			}
		}
		if c.kind == ruleGlob && !strings.ContainsAny(r.glob, "?[\\") {
			for _, f := range strings.Split(r.glob, "*") {
				if f != "" {
					c.frags = append(c.frags, f)
				}
			}
		}
		out[i] = c
	}
	return out
}()

// match is path.Match(c.glob, name).
func (c compiledRule) match(name string) bool {
	switch c.kind {
	case ruleLiteral:
		return name == c.lit
	case rulePrefix:
		return strings.HasPrefix(name, c.lit) && !strings.Contains(name[len(c.lit):], "/")
	case ruleSuffix:
		return strings.HasSuffix(name, c.lit) && !strings.Contains(name[:len(name)-len(c.lit)], "/")
	}
	for _, f := range c.frags {
		if !strings.Contains(name, f) {
			return false
		}
	}
	ok, _ := path.Match(c.glob, name)
	return ok
}

// globMatch is path.Match(glob, name) through a compiledRule.
func globMatch(glob, name string) bool {
	for _, c := range compiledRules {
		if c.glob == glob {
			return c.match(name)
		}
	}
	ok, _ := path.Match(glob, name)
	return ok
}
