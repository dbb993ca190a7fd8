package tools

import (
	"path"
	"strings"
)

// Visible reports whether a tracked path may reach a model: never orch's
// own folder, git's, or a file whose name looks like it holds secrets
// (.env files, private keys, credential stores). Untracked and ignored
// files never reach a model at all: the workspace lists tracked files
// only.
func Visible(p string) bool {
	if p == "" || strings.HasPrefix(p, ".orch/") || strings.HasPrefix(p, ".git/") || p == ".git" {
		return false
	}
	return !SecretLooking(p)
}

// secretNames are file names (lower case) that hold secrets by convention.
var secretNames = map[string]bool{
	".env": true, ".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true,
	".htpasswd": true, ".pgpass": true, ".git-credentials": true, "credentials": true,
	"credentials.json": true, "id_rsa": true, "id_dsa": true, "id_ecdsa": true, "id_ed25519": true,
	"secrets.yml": true, "secrets.yaml": true, "secrets.json": true, "secrets.toml": true,
	".dockercfg": true, "kubeconfig": true,
}

// secretExts are extensions (lower case) of key and certificate stores.
var secretExts = map[string]bool{
	".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true,
	".kdbx": true, ".ppk": true, ".asc": true, ".gpg": true,
}

// SecretLooking reports whether p's name suggests it holds secrets.
func SecretLooking(p string) bool {
	name := strings.ToLower(path.Base(p))
	switch {
	case secretNames[name]:
		return true
	case strings.HasPrefix(name, ".env.") && name != ".env.example" && name != ".env.sample" && name != ".env.template":
		return true
	case strings.HasPrefix(name, "id_rsa") || strings.HasPrefix(name, "id_ed25519") || strings.HasPrefix(name, "id_ecdsa"):
		return true
	}
	return secretExts[path.Ext(name)]
}
