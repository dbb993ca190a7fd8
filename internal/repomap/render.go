package repomap

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// EstimateTokens is the map's token estimate for text: about four bytes a
// token, the usual figure for code and English with current tokenizers.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }

// Map renders the repository map for the seeds within budgetTokens: a
// header, the signatures of the top-ranked files' definitions ("line:
// signature" under each path), more relevant files by path, then a folder
// summary of the rest. It never exceeds the budget (by EstimateTokens);
// a budget too small for anything gives "".
func (ix *Index) Map(ctx context.Context, s Seeds, budgetTokens int) (string, error) {
	r, err := ix.rank(ctx, s)
	if err != nil {
		return "", err
	}
	return ix.render(r, budgetTokens), nil
}

// candidate is one definition that may be shown.
type candidate struct {
	file  int32
	def   int // index into the file's defs
	score float64
}

// maxMapFiles bounds the files whose definitions are considered.
const maxMapFiles = 400

func (ix *Index) render(r *ranking, budgetTokens int) string {
	budget := budgetTokens * 4 // bytes
	var b strings.Builder
	fmt.Fprintf(&b, "Repository map: %d tracked files visible to you, ranked for this task (most relevant first). Under each file, its definitions as \"line: signature\".\n", len(ix.all))
	if !DefinitionsAvailable {
		b.WriteString("(This orch was built without cgo: only Go files' definitions are indexed, the other files are ranked by names and references.)\n")
	}
	if b.Len() > budget {
		return ""
	}
	planned := map[int32]bool{}
	for _, f := range r.terms.planned {
		planned[f] = true
	}

	// Definitions, scored.
	var cands []candidate
	top := r.order
	if len(top) > maxMapFiles {
		top = top[:maxMapFiles]
	}
	for _, f := range top {
		e := ix.entry(f)
		if e == nil {
			continue
		}
		for di, d := range e.defs {
			w := 1 + math.Log1p(float64(ix.refCount(d.name)))
			if m, ok := r.mentioned[d.name]; ok {
				w *= 2 * m
			} else {
				switch kindList[d.kind] {
				case KindField, KindVar, KindConst, KindMacro:
					w *= 0.5
				}
			}
			if planned[f] {
				w *= 3
			}
			cands = append(cands, candidate{file: f, def: di, score: r.rank[f] * w})
		}
	}
	// Each further definition of one file counts a little less, so the
	// top file does not take the whole map.
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	nth := map[int32]int{}
	for i := range cands {
		k := nth[cands[i].file]
		nth[cands[i].file] = k + 1
		cands[i].score *= math.Pow(0.93, float64(k))
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })

	b.WriteString(ix.renderOccurrences(r, budget*15/100))
	defBudget := budget*7/10 - b.Len()
	lo, hi := 0, len(cands)
	for lo < hi { // the most definitions that fit
		mid := (lo + hi + 1) / 2
		if len(ix.renderDefs(r, cands[:mid])) <= defBudget {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	defs := ix.renderDefs(r, cands[:lo])
	b.WriteString(defs)
	shown := map[int32]bool{}
	for _, c := range cands[:lo] {
		shown[c.file] = true
	}

	// More relevant files, by path, until a tenth of the budget.
	relBudget := budget * 8 / 10
	var rel []string
	for _, f := range r.order {
		if len(rel) >= 40 || r.rank[f] <= 0 {
			break
		}
		if shown[f] || !ix.seeded(r, f) {
			continue
		}
		p := showPath(ix.all[f].Path)
		line := "More relevant files: " + strings.Join(append(rel, p), ", ") + "\n"
		if b.Len()+len(line) > relBudget {
			break
		}
		rel = append(rel, p)
		shown[f] = true
	}
	if len(rel) > 0 {
		b.WriteString("\nMore relevant files: " + strings.Join(rel, ", ") + "\n")
	}
	b.WriteString(ix.renderFolders(r, shown, budget-b.Len()))
	return b.String()
}

// renderOccurrences lists where git grep found the task's identifiers,
// within budget bytes.
func (ix *Index) renderOccurrences(r *ranking, budget int) string {
	if len(r.occur) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nWhere the task's identifiers occur (path:lines):\n")
	for _, id := range r.terms.idents {
		occ := r.occur[id]
		if len(occ) == 0 {
			continue
		}
		var parts []string
		for i := 0; i < len(occ); {
			j := i
			var lines []string
			for j < len(occ) && occ[j].file == occ[i].file {
				lines = append(lines, strconv.Itoa(occ[j].line))
				j++
			}
			if len(lines) > 8 {
				lines = append(lines[:8], "…")
			}
			parts = append(parts, showPath(ix.all[occ[i].file].Path)+":"+strings.Join(lines, ","))
			i = j
		}
		more := ""
		if len(occ) == maxOccurrences {
			more = "; …"
		}
		line := fmt.Sprintf("  %s: %s%s\n", id, strings.Join(parts, "; "), more)
		for len(line) > budget/2 && len(parts) > 1 {
			parts = parts[:len(parts)-1]
			line = fmt.Sprintf("  %s: %s; …\n", id, strings.Join(parts, "; "))
		}
		if b.Len()+len(line) > budget {
			break
		}
		b.WriteString(line)
	}
	if b.Len() < 60 {
		return ""
	}
	return b.String()
}

// seeded reports whether a file got weight from the seeds (not only from
// the uniform share).
func (ix *Index) seeded(r *ranking, f int32) bool {
	return slices.Contains(r.terms.planned, f) || slices.Contains(r.terms.paths, f) ||
		r.rank[f] > 2/float64(len(ix.all))
}

// renderDefs writes the chosen definitions grouped by file, files in rank
// order, definitions in line order.
func (ix *Index) renderDefs(r *ranking, cands []candidate) string {
	byFile := map[int32][]int{}
	for _, c := range cands {
		byFile[c.file] = append(byFile[c.file], c.def)
	}
	var b strings.Builder
	for _, f := range r.order {
		ds, ok := byFile[f]
		if !ok {
			continue
		}
		sort.Ints(ds)
		e := ix.entry(f)
		fmt.Fprintf(&b, "\n%s\n", showPath(ix.all[f].Path))
		for _, di := range ds {
			d := e.defs[di]
			sig := d.sig
			if sig == "" {
				sig = kindList[d.kind] + " " + ix.name(d.name)
			}
			fmt.Fprintf(&b, "  %d: %s\n", d.line, sig)
		}
	}
	return b.String()
}

// folder is one line of the folder summary.
type folder struct {
	dir   string
	files int
	rank  float64
	exts  map[string]int
}

// renderFolders summarises the files not shown, by folder: the top-level
// folders first, then the heaviest folders split into their subfolders
// while the budget allows.
func (ix *Index) renderFolders(r *ranking, shown map[int32]bool, budget int) string {
	const head = "\nOther files by folder (files, by extension):\n"
	if budget < len(head)+40 {
		return ""
	}
	left := 0
	for f := range ix.all {
		if !shown[int32(f)] {
			left++
		}
	}
	if left == 0 {
		return ""
	}
	// Start with depth 1 and deepen the highest-ranked folders.
	depth := map[string]int{} // folder prefix → chosen depth below it
	summarise := func() []*folder {
		m := map[string]*folder{}
		for i, f := range ix.all {
			if shown[int32(i)] {
				continue
			}
			d := folderOf(f.Path, depth)
			fo := m[d]
			if fo == nil {
				fo = &folder{dir: d, exts: map[string]int{}}
				m[d] = fo
			}
			fo.files++
			fo.rank += r.rank[i]
			ext := strings.ToLower(path.Ext(f.Path))
			if ext == "" || len(ext) > 8 || ext == strings.ToLower(path.Base(f.Path)) {
				ext = "other"
			}
			fo.exts[ext]++
		}
		out := make([]*folder, 0, len(m))
		for _, fo := range m {
			out = append(out, fo)
		}
		sort.Slice(out, func(i, j int) bool {
			if out[i].rank != out[j].rank {
				return out[i].rank > out[j].rank
			}
			return out[i].dir < out[j].dir
		})
		return out
	}
	folders := summarise()
	text := renderFolderLines(folders, budget-len(head))
	for round := 0; round < 8; round++ {
		// Split the heaviest folder that can still be split.
		split := false
		for _, fo := range folders {
			if fo.dir == "./" || strings.Count(fo.dir, "/") >= 6 || fo.files < 4 {
				continue
			}
			if _, done := depth[fo.dir]; done {
				continue
			}
			depth[fo.dir] = 1
			split = true
			break
		}
		if !split {
			break
		}
		next := summarise()
		t := renderFolderLines(next, budget-len(head))
		if len(next) > 60 || strings.Contains(t, "… and ") && !strings.Contains(text, "… and ") {
			break
		}
		folders, text = next, t
	}
	if text == "" {
		return ""
	}
	return head + text
}

// folderOf is the folder a path is summarised under: its first element,
// extended by one element for each chosen folder it lies in.
func folderOf(p string, depth map[string]int) string {
	parts := strings.Split(p, "/")
	if len(parts) == 1 {
		return "./"
	}
	d := parts[0] + "/"
	for i := 1; i < len(parts)-1; i++ {
		if _, ok := depth[d]; !ok {
			break
		}
		d += parts[i] + "/"
	}
	return d
}

// renderFolderLines writes one line per folder within budget bytes,
// naming what did not fit.
func renderFolderLines(folders []*folder, budget int) string {
	var b strings.Builder
	for i, fo := range folders {
		type ec struct {
			ext string
			n   int
		}
		var exts []ec
		for e, n := range fo.exts {
			exts = append(exts, ec{e, n})
		}
		sort.Slice(exts, func(a, c int) bool {
			if exts[a].n != exts[c].n {
				return exts[a].n > exts[c].n
			}
			return exts[a].ext < exts[c].ext
		})
		var parts []string
		for j, e := range exts {
			if j == 4 {
				parts = append(parts, "…")
				break
			}
			parts = append(parts, fmt.Sprintf("%s %d", e.ext, e.n))
		}
		line := fmt.Sprintf("  %s %d (%s)\n", showPath(fo.dir), fo.files, strings.Join(parts, ", "))
		rest := 0
		for _, x := range folders[i+1:] {
			rest += x.files
		}
		tail := ""
		if rest > 0 {
			tail = fmt.Sprintf("  … and %d more folders, %d files\n", len(folders)-i-1, rest)
		}
		if b.Len()+len(line)+len(tail) > budget {
			restAll := fo.files + rest
			t := fmt.Sprintf("  … and %d more folders, %d files\n", len(folders)-i, restAll)
			if b.Len()+len(t) <= budget {
				b.WriteString(t)
			}
			return b.String()
		}
		b.WriteString(line)
	}
	return b.String()
}
