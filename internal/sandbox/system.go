package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The sandbox's root is empty (bwrap's own tmpfs, read-only once the
// binds are made): a suite sees the folders below and what New binds for
// the run — the directory, its dependency folders and caches, the
// toolchains — and nothing else of the machine. The user's working tree,
// .orch/, other repositories, /srv, /home, /root, /var and /mnt are not
// there, wherever the repository lives (docs/sandbox.md).
var (
	// systemDirs are shown read-only at their own path when they exist
	// (a symbolic link, as /bin → usr/bin on a merged /usr, is made again
	// as a link).
	systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/sys", "/nix/store", "/gnu/store", "/snap"}
	// etcEntries are the entries of /etc shown (shell patterns): the
	// dynamic linker, users and groups by number, name resolution, time
	// zone, locale, certificates, the alternatives (/usr/bin/java links
	// there) and the toolchains' own configuration. Not: shadow files,
	// ssh, sudoers, pam, npmrc, pip.conf, gitconfig, environment and the
	// rest, which may hold credentials or say nothing a build needs.
	etcEntries = []string{
		"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
		"passwd", "group", "nsswitch.conf", "hosts", "host.conf", "hostname", "gai.conf", "resolv.conf",
		"networks", "protocols", "services", "rpc", "ethertypes",
		"localtime", "timezone", "locale.alias", "locale.gen", "locale.conf",
		"ca-certificates", "ca-certificates.conf", "ssl/certs", "ssl/cert.pem", "ssl/openssl.cnf",
		"pki/tls/certs", "pki/ca-trust", "crypto-policies",
		"os-release", "lsb-release", "debian_version", "alpine-release", "redhat-release", "system-release", "fedora-release",
		"machine-id", "mtab", "mime.types", "magic", "magic.mime", "terminfo", "inputrc", "shells", "login.defs",
		"fonts", "java-*", "jvm", "maven", "gradle", "python3*", "perl", "xml", "sgml",
	}
)

// systemArgs are the bwrap options that show the system folders: the
// dirs of systemDirs and the entries of etcEntries that exist here.
func systemArgs(h host) []string {
	var args, made []string
	show := func(p string) {
		// bwrap makes the folders on the way to a bind closed (0700):
		// as root the suite's user could not pass them.
		for _, a := range ancestors(filepath.Dir(p)) {
			if slices.Contains(made, a) {
				continue
			}
			made = append(made, a)
			if h.perms {
				args = append(args, "--perms", "0755")
			}
			args = append(args, "--dir", a)
		}
		info, err := os.Lstat(p)
		if err != nil {
			return
		}
		if info.Mode()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return
			}
			args = append(args, "--symlink", target, p)
			return
		}
		args = append(args, "--ro-bind", p, p)
	}
	for _, d := range systemDirs {
		show(d)
	}
	var etc []string
	for _, pat := range etcEntries {
		matches, _ := filepath.Glob(filepath.Join("/etc", pat))
		for _, m := range matches {
			if !slices.Contains(etc, m) {
				etc = append(etc, m)
			}
		}
	}
	for _, e := range etc {
		show(e)
	}
	return args
}

// visibleSystemPath reports whether p (clean, absolute) is shown by
// systemArgs already: it lies in one of systemDirs.
func visibleSystemPath(p string) bool {
	return slices.ContainsFunc(systemDirs, func(d string) bool { return within(p, d) })
}

// depth is the number of names in the absolute path p ("/" is 0).
func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(filepath.Clean(p), "/")
}

// shownSystemDirs are the systemDirs that exist here.
func shownSystemDirs() []string {
	var out []string
	for _, d := range systemDirs {
		if _, err := os.Lstat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// ancestors returns p's folders from the top down, p included, "/" not.
func ancestors(p string) []string {
	var out []string
	for ; p != "/" && p != "."; p = filepath.Dir(p) {
		out = append([]string{p}, out...)
	}
	return out
}
