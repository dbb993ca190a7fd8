// Package repomap gives each agent role a ranked map of the repository for
// its first message (README, "What a model sees"): which files matter for
// the task, the signatures of their definitions, and the rest as a folder
// summary, within a token budget.
//
// # Use
//
//	ix, err := repomap.Build(ctx, repoDir, repomap.Options{
//		CacheDir: filepath.Join(orchDir, "cache", "repomap"),
//		Commit:   base,            // "" = the index (tracked files)
//		Policy:   policy,          // visibility.NewPolicy(cfg.Context.AllowPaths)
//	})
//	text, err := ix.Map(ctx, repomap.Seeds{
//		Brief: brief, Plan: planText, Paths: filePlanPaths,
//	}, 2000) // tokens
//
// Lookups for tools: (*Index).Definitions(name) (where an identifier is
// defined, with line and signature), (*Index).References(name) (the source
// files that mention it), (*Index).FileDefinitions(path), (*Index).Rank
// (every visible file, ranked for the seeds), and (*Index).Files, the
// visibility.Files every path an agent reads must pass.
//
// # What it does
//
// Build lists the files a model may see (package visibility: tracked,
// regular, not secret-looking), reads the source files' blobs through one
// `git cat-file --batch`, and indexes each blob once:
//
//   - definitions with tree-sitter (github.com/smacker/go-tree-sitter's
//     bundled grammars) for Go, Python, JavaScript, TypeScript/TSX, Rust and
//     Java, with this package's own definition patterns (lang.go),
//     matched by one walk of the syntax tree in C that skips function
//     bodies (parse_cgo.c): functions, methods, types, classes,
//     interfaces, fields, top-level constants and variables; a Go file is
//     parsed with the standard library's go/parser
//     instead (godefs.go), which finds the same definitions at a fraction
//     of the cost, unless it has a syntax error;
//   - references by scanning every identifier of the file (code, comments
//     and strings), for those languages and other source files (C, C++, C#,
//     Ruby, PHP, Kotlin, Swift, ...), keeping the 400 most used per file.
//
// The tags live in one index file under CacheDir (format.go describes
// it), memory-mapped and read in place: rows by path and blob, each
// file's entry, an identifier table with a hash index, and for each
// identifier the rows defining and mentioning it. A warm build checks the
// file's checksum, matches the listing (`git ls-files -s` blob ids, or the
// commit's tree) against the rows and decodes nothing more; a ranking
// decodes the entries it visits. When files changed, only they are parsed
// (a renamed or copied file reuses the entry of its blob), and the new
// file copies the unchanged entries byte for byte: identifier ids are
// never renumbered. A first index writes the file after every 8,192
// files, so an interrupted one resumes, and reports its progress through
// Options.Progress once it has run for a second; it reads the file it
// replaces through buffers, unmaps it at once, and holds the Go heap
// under a soft memory limit while it runs (memlimit.go). Documentation and data
// files (Markdown, JSON, YAML, ...) are indexed for their identifiers
// only, so the search for the task's identifiers finds them. A damaged or
// foreign file is ignored and rebuilt; the file is replaced atomically,
// so concurrent builds are safe. Files above MaxFileBytes (512 KiB),
// binary and minified files are listed, not indexed. Nothing of
// tree-sitter is initialised before the first parse. Within one process,
// Build returns the index it already built for the same folder, commit,
// options and visible files with the same blobs (the last two are kept;
// Options.Fresh builds anew), so the roles of one phase run share one
// index.
//
// Map ranks files with personalised PageRank over the reference graph (a
// file that mentions an identifier points at the files defining it;
// identifiers defined in many places weigh less, long compound ones more,
// identifiers the task names ten times more), computed by local push from
// the seeds outward, so it reads the files near the seeds, not the whole
// graph (rank.go). The personalisation comes from the seeds: file plan
// paths, paths and identifiers named in the brief and plan (camelCase,
// snake_case, `quoted`, or capitalised names the index defines), the files
// `git grep -w -F` finds those identifiers in (searching only the files
// the index says define or mention them), and files whose path contains a
// word of the brief. The rendered map has a
// header, where the task's identifiers occur (path:lines, from git grep),
// the top definitions grouped by file ("line: signature"; each further
// definition of a file counts a little less so one file does not take the
// whole map), more relevant files by path, and a folder summary of the
// rest. EstimateTokens (four bytes a token) keeps it within the budget.
//
// Built without cgo (CGO_ENABLED=0, or no C compiler), DefinitionsAvailable
// is false: Go files' definitions are still indexed (go/parser), the
// other languages' are not; the map ranks those files by paths,
// references and git grep, and says so. Its rows in the index file carry
// flagNoParser (format.go): a build with cgo sharing the cache folder
// parses those files again, and a build without cgo reuses every row.
package repomap
