package testreport

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/orchdev/orch/internal/artifact"
	"github.com/orchdev/orch/internal/clip"
	"github.com/orchdev/orch/internal/lazyre"
)

var (
	tapVersion  = lazyre.New(`^TAP version \d+$`)
	tapSubtest  = lazyre.New(`^( *)# Subtest: (.*)$`)
	tapLine     = lazyre.New(`^( *)(ok|not ok)\b(?: +\d+)?(?: *-)? *(.*)$`)
	tapYAMLOpen = lazyre.New(`^( *)---$`)
	tapTotal    = lazyre.New(`^# (tests|pass|fail|cancelled|skipped|todo)\s+(\d+)$`)
	specTotal   = lazyre.New(`^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)$`)
	specFail    = lazyre.New(`^( *)✖ (.+?)(?: \([\d.]+m?s\))?$`)
	specParent  = lazyre.New(`^( *)▶ (.+)$`)
	specSkip    = lazyre.New(`^( *)﹣ (.+?)(?: \([\d.]+m?s\))? # (SKIP|TODO)\b.*$`)
	// jestTotal is Jest's summary of one run: "Tests:       1 failed, 2
	// skipped, 94 passed, 97 total".
	jestTotal = lazyre.New(`^Tests:\s+((?:\d+ (?:failed|skipped|todo|passed), )*)(\d+) total$`)
	jestCount = lazyre.New(`(\d+) (failed|skipped|todo|passed)`)
	// npmLifecycle starts npm's report of a script that failed
	// ("npm error Lifecycle script `build` failed with error:", npm 9 and
	// earlier "npm ERR! …"); npmDetail is one of the lines after it
	// ("npm error workspace @scope/pkg@1.0.0", "npm error code 2",
	// "npm error command sh -c rollup -c").
	npmLifecycle = lazyre.New("^npm (?:error|ERR!) Lifecycle script `([^`]+)` failed with error:$")
	npmDetail    = lazyre.New(`^npm (?:error|ERR!) (code|workspace|command) (.+)$`)
	// pnpmScope opens a recursive run's output ("Scope: 3 of 4 workspace
	// projects", "Scope: all 4 workspace projects"); pnpmStart is a
	// member starting under the prefixed reporter ("packages/a test$
	// node --test") and pnpmEnd its end ("packages/a test: Done");
	// pnpmStream is a member starting under the streamed one (one member
	// at a time: "> @ws/a@1.0.0 test /home/u/ws/packages/a").
	pnpmScope  = lazyre.New(`^Scope: (?:all )?(\d+)(?: of \d+)? workspace projects?$`)
	pnpmStart  = lazyre.New(`^(\S+) ([^\s:$]+)\$ `)
	pnpmEnd    = lazyre.New(`^(\S+) ([^\s:$]+): (Done|Failed)$`)
	pnpmStream = lazyre.New(`^> (\S+) ([^\s:$]+) /`)
	// pnpmFirstFail is pnpm's error when a recursive run stops at its
	// first failing member (its default, bail): " ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL
	//  @ws/b@1.0.0 test: `node --test`" (spaced with U+2009).
	pnpmFirstFail = lazyre.New(`^[\s\x{2009}]*ERR_PNPM_RECURSIVE_RUN_FIRST_FAIL[\s\x{2009}]+(\S+) ([^\s:]+):`)
	// yarnForeachFail is yarn's (2 and later) error when a workspace's
	// script fails under yarn workspaces foreach, which then starts no
	// other: "The command failed in workspace @ws/b@workspace:packages/b
	// with exit code 1".
	yarnForeachFail = lazyre.New(`^The command failed in workspace (\S+) with exit code (\d+)$`)
	// jestFile is Jest's line for a test file: "FAIL tests/x.test.ts
	// (9.338 s)", "PASS tests/y.test.ts".
	jestFile = lazyre.New(`^\s*(FAIL|PASS)\s+(\S+)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?\s*$`)
	// jestFailure names a failure under a FAIL line: "  ● describe ›
	// test", or "  ● Test suite failed to run" for a file that did not
	// load (a TypeScript error under ts-jest, a missing module).
	jestFailure = lazyre.New(`^  ● (.+)$`)
	// mochaTotal is a line of Mocha's summary (spec, dot, list and most
	// reporters): "  272 passing (3s)", "  4 pending", "  1 failing".
	mochaTotal = lazyre.New(`^ {0,4}(\d+) (passing|pending|failing)(?: \(\d+(?:\.\d+)?(?:ms|s|m|h)\))?$`)
	// mochaFailure starts a failure of Mocha's report after "N failing":
	// "  1) suite" (the title goes on over the indented lines up to the
	// one that ends with ":").
	mochaFailure = lazyre.New(`^  (\d+)\) (.+)$`)
	// vitestTotal is Vitest's summary of one run: "      Tests  1 failed
	// | 272 passed | 4 skipped | 1 todo (278)".
	vitestTotal = lazyre.New(`^\s*Tests\s+((?:\d+ (?:failed|passed|skipped|todo|expected fail)(?: \| )?)+)\s*\((\d+)\)$`)
	vitestCount = lazyre.New(`(\d+) (failed|passed|skipped|todo|expected fail)`)
	// vitestFail names a failed test in Vitest's "Failed Tests" section:
	// " FAIL  test/math.test.js > math > fails".
	vitestFail = lazyre.New(`^ FAIL  (\S.* > .+?)(?: \[[^\]]*\])?$`)
	// vitestFileFail names a test file that did not load in Vitest's
	// "Failed Suites" section: " FAIL  test/x.test.ts [ test/x.test.ts ]"
	// (a syntax error, an import that fails); its tests are in no count.
	vitestFileFail = lazyre.New(`^ FAIL  (\S+) \[ (\S+) \]$`)
	// AVA's default reporter prints a line per test ("✔ file › test",
	// "✔ test" with one test file,
	// "✘ [fail]: file › test", "- [skip] …", "- [todo] …", "✔ [expected
	// fail] …") and a summary without the passed count when something
	// failed ("1 test failed", "1 known failure", "2 tests skipped").
	avaPass  = lazyre.New(`^\s*✔ (\[expected fail\] )?(.+?)(?: \(\d+(?:\.\d+)?m?s\))?$`)
	avaFail  = lazyre.New(`^\s*✘ \[(?:fail|timeout)\]: (.+?)(?: \(\d+(?:\.\d+)?m?s\))?$`)
	avaSkip  = lazyre.New(`^\s*- \[(skip|todo)\] (.+)$`)
	avaTotal = lazyre.New(`^\s*(\d+) (?:tests? (passed|failed|skipped|todo)|(known failures?))$`)
	// tapDirective is a "# SKIP reason" or "# TODO reason" after a
	// description; a "#" escaped as "\#" is not one.
	tapDirective = lazyre.New(`(?i)(?:^|[^\\])#\s*(skip|todo)\b\S*\s*(.*)$`)
)

// TAPParser reads the Test Anything Protocol as node's test runner
// (`node --test`, the default reporter when the output is not a
// terminal), tape and tap print it: one case per "ok"/"not ok" test point
// at any nesting depth, named by its "# Subtest:" path, except node's
// suites (a YAML block with type: 'suite'). "# SKIP" makes a case
// skipped, and so does "# TODO" (a test not expected to pass yet); a
// failure's YAML block is its output and its error line its message.
// Node's "# tests N" totals (summed over several runs in one script) are
// checked against the cases; a difference becomes a note.
//
// It also reads the totals of node's spec reporter ("ℹ tests N", the
// default on a terminal and in newer node versions): the counts then come
// from those totals and the cases are the failing and skipped tests.
// Without TAP or node's totals, Jest's summary of each run ("Tests:
// 1 failed, 2 skipped, 94 passed, 97 total", summed over the runs of one
// script) gives the counts, and no cases; so do Mocha's ("272 passing",
// "4 pending", "1 failing") and Vitest's ("Tests  1 failed | 272 passed
// (273)"), whose failures are named as cases, and AVA's test lines. The
// summaries of every run of a script are summed, whichever runner; TAP
// without node's "# tests" totals beside them is a test's output.
type TAPParser struct {
	onOutput func(string)
	cases    []artifact.Case
	pending  *tapPoint
	path     []string // "# Subtest:" names by nesting level
	tap      bool     // a TAP version line or test point was seen
	totals   map[string]int
	nTotals  int // "# tests" lines seen
	spec     map[string]int
	nSpec    int
	specCase []artifact.Case
	jest     map[string]int // Jest's "Tests:" summaries, summed
	nJest    int
	mocha    map[string]int // Mocha's "N passing" lines, summed
	nMocha   int
	vitest   map[string]int // Vitest's "Tests" summaries, summed
	nVitest  int
	// vitestNotLoaded counts the test files of Vitest's "Failed Suites"
	// (not in its Tests count)
	vitestNotLoaded int
	ava             []artifact.Case // AVA's test lines, counted once its summary is seen
	avaTotal        map[string]int
	nAva            int
	// Jest's failures, each once (its "Summary of all failing tests"
	// repeats them), named "file > describe › test"
	jestFailFile  string // the test file of the FAIL line being read
	jestNamed     []artifact.Case
	jestSeen      map[string]bool
	jestMsg       *int // index in jestNamed of a failure awaiting its message
	jestNotLoaded int  // "Test suite failed to run": not in Jest's count
	// npm's failed scripts other than test (a pretest build of a
	// workspace member): its tests never ran, and no runner counted them
	npmScript *npmFailure
	npmFailed []artifact.Case
	npmSeen   map[string]bool
	// a pnpm recursive run: the members in its scope, those started
	// and those that ended (by folder or name@version), in order
	pnpm      *pnpmRun
	pnpmNotes []string // of the script's earlier recursive runs that stopped early
	// the members' own output in a prefixed pnpm run ("packages/a test:
	// ok 1 - adds"), each read by a parser of its own: their lines
	// interleave, and no runner's format starts with pnpm's prefix
	members     map[string]*TAPParser
	memberOrder []string
	// yarn workspaces foreach's first failing workspace and exit code
	yarnFailed, yarnCode string
	// failures of Mocha's and Vitest's reports
	named      []artifact.Case
	mochaTitle *artifact.Case  // a Mocha failure whose title is being read
	wantMsg    *int            // index in named of a failure awaiting its message
	inFailed   bool            // in the spec reporter's "failing tests:" recap
	parents    map[string]bool // "▶" lines (suites, tests with subtests) by indent and name
}

// pnpmRun is what the output says of a pnpm recursive run.
type pnpmRun struct {
	scope     int
	started   []string
	seen      map[string]bool // started, as a set
	ended     map[string]bool
	prefixed  bool   // the prefixed reporter (several members at once)
	firstFail string // the member it stopped at, "" while it has not
	script    string
	// startScript is the script each started member runs, by folder
	// (the prefix of its lines is "folder script: ")
	startScript map[string]string
}

// maxPnpmMembers bounds the members remembered of a recursive run.
const maxPnpmMembers = 10000

// npmFailure is npm's report of a failed script being read.
type npmFailure struct {
	script, code, workspace, command string
}

type tapPoint struct {
	c      artifact.Case
	indent int
	yaml   bool // in its YAML block
	yamlIn int  // indentation of the YAML block
	suite  bool
	out    BoundedBuf
	errMsg string
	inErr  bool // reading a multi-line "error: |-" value
}

// NewTAPParser returns a parser passing the text on to onOutput (may be
// nil).
func NewTAPParser(onOutput func(string)) *TAPParser {
	return &TAPParser{onOutput: onOutput, totals: map[string]int{}, spec: map[string]int{}, jest: map[string]int{}, mocha: map[string]int{}, vitest: map[string]int{}, avaTotal: map[string]int{}, parents: map[string]bool{}, jestSeen: map[string]bool{}, npmSeen: map[string]bool{}}
}

// ParseTAP reads a whole TAP (or node spec reporter) output.
func ParseTAP(r io.Reader) (Result, error) {
	p := NewTAPParser(nil)
	err := p.Consume(r)
	return p.Finish(), err
}

// Consume reads r to its end.
func (p *TAPParser) Consume(r io.Reader) error {
	return consumeLines(r, p.onOutput, p.line)
}

func (p *TAPParser) line(line string) {
	if p.memberLine(line) {
		return
	}
	if pt := p.pending; pt != nil && pt.yaml {
		trimmed := strings.TrimSpace(line)
		if trimmed == "..." {
			pt.yaml = false
			p.flush()
			return
		}
		pt.out.WriteString(line + "\n")
		body := strings.TrimPrefix(line, strings.Repeat(" ", pt.yamlIn))
		switch {
		case body == "type: 'suite'" || body == "type: suite":
			pt.suite = true
		case strings.HasPrefix(body, "error: "):
			v := strings.TrimPrefix(body, "error: ")
			if v == "|-" || v == "|" || v == ">-" || v == ">" {
				pt.inErr = true
			} else {
				pt.errMsg = strings.Trim(v, `'"`)
			}
		case pt.inErr && strings.HasPrefix(body, "  "):
			if pt.errMsg == "" && strings.TrimSpace(body) != "" {
				pt.errMsg = strings.TrimSpace(body)
			}
		default:
			pt.inErr = false
		}
		return
	}
	if m := tapYAMLOpen.FindStringSubmatch(line); m != nil && p.pending != nil && len(m[1]) >= p.pending.indent {
		p.pending.yaml, p.pending.yamlIn = true, len(m[1])
		return
	}
	if tapVersion.MatchString(line) {
		p.flush()
		p.tap = true
		p.path = p.path[:0]
		return
	}
	if m := tapSubtest.FindStringSubmatch(line); m != nil {
		p.flush()
		p.setPath(len(m[1])/4, m[2])
		return
	}
	if m := tapLine.FindStringSubmatch(line); m != nil {
		p.flush()
		p.point(len(m[1]), m[2] == "ok", m[3])
		return
	}
	p.flush()
	if m := tapTotal.FindStringSubmatch(line); m != nil {
		if m[1] == "tests" {
			p.nTotals++
		}
		n, _ := strconv.Atoi(m[2])
		p.totals[m[1]] += n
		return
	}
	if m := specTotal.FindStringSubmatch(line); m != nil {
		if m[1] == "tests" {
			p.nSpec++
			p.inFailed = false
		}
		n, _ := strconv.Atoi(m[2])
		p.spec[m[1]] += n
		return
	}
	if m := jestTotal.FindStringSubmatch(line); m != nil {
		p.nJest++
		for _, c := range jestCount.FindAllStringSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(c[1])
			p.jest[c[2]] += n
		}
		n, _ := strconv.Atoi(m[2])
		p.jest["total"] += n
		return
	}
	if p.npmLine(line) || p.pnpmLine(line) {
		return
	}
	if p.otherReporter(line) {
		return
	}
	if strings.HasPrefix(line, "✖ failing tests:") {
		p.inFailed = true
		return
	}
	if m := specParent.FindStringSubmatch(line); m != nil {
		p.inFailed = false
		if len(p.parents) < 100000 {
			p.parents[m[1]+m[2]] = true
		}
		return
	}
	if p.inFailed {
		return
	}
	if m := specFail.FindStringSubmatch(line); m != nil {
		if p.parents[m[1]+m[2]] {
			return // a suite, or a test whose subtests failed
		}
		p.specCase = append(p.specCase, artifact.Case{Name: clip.Runes(m[2], 1000), Status: StatusFail, Message: "test failed"})
		return
	}
	if m := specSkip.FindStringSubmatch(line); m != nil {
		p.specCase = append(p.specCase, artifact.Case{Name: clip.Runes(m[2], 1000), Status: StatusSkip})
	}
}

// otherReporter reads Mocha's and Vitest's totals and failures; it
// reports whether the line was theirs.
func (p *TAPParser) otherReporter(raw string) bool {
	line := ansiCodes.ReplaceAllString(raw, "")
	if t := p.mochaTitle; t != nil {
		part := strings.TrimSpace(line)
		switch {
		case part == "":
			p.mochaTitle = nil
		case strings.HasSuffix(part, ":"):
			t.Name = clip.Runes(t.Name+" > "+strings.TrimSuffix(part, ":"), 1000)
			p.addNamed(*t)
			p.mochaTitle = nil
		default:
			t.Name = clip.Runes(t.Name+" > "+part, 1000)
		}
		return true
	}
	fillMessage(p.named, &p.wantMsg, line)
	if m := mochaTotal.FindStringSubmatch(line); m != nil {
		if m[2] == "passing" {
			p.nMocha++
		}
		p.mocha[m[2]] += count(m[1])
		return true
	}
	if p.nMocha > 0 && p.mocha["failing"] > 0 {
		if m := mochaFailure.FindStringSubmatch(line); m != nil {
			title := strings.TrimSpace(m[2])
			if strings.HasSuffix(title, ":") {
				p.addNamed(artifact.Case{Name: clip.Runes(strings.TrimSuffix(title, ":"), 1000), Status: StatusFail, Message: "test failed"})
			} else {
				p.mochaTitle = &artifact.Case{Name: clip.Runes(title, 1000), Status: StatusFail, Message: "test failed"}
			}
			return true
		}
	}
	if m := vitestTotal.FindStringSubmatch(line); m != nil {
		p.nVitest++
		for _, c := range vitestCount.FindAllStringSubmatch(m[1], -1) {
			p.vitest[c[2]] += count(c[1])
		}
		p.vitest["total"] += count(m[2])
		return true
	}
	if m := vitestFail.FindStringSubmatch(line); m != nil {
		p.addNamed(artifact.Case{Name: clip.Runes(m[1], 1000), Status: StatusFail, Message: "test failed"})
		return true
	}
	if m := vitestFileFail.FindStringSubmatch(line); m != nil && m[1] == m[2] {
		p.vitestNotLoaded++
		p.addNamed(artifact.Case{Name: clip.Runes(m[1], 1000), Status: StatusFail, Message: "the test file failed to load"})
		return true
	}
	if p.jestLine(line) {
		return true
	}
	return p.avaLine(line)
}

// npmLine reads npm's report of a failed script. A script other than
// test that failed in a workspace member (its pretest build: "npm test
// --workspaces" goes on to the next member) means that member's tests
// never ran: one failed case names it, or the counts would leave the
// member out without a word.
func (p *TAPParser) npmLine(line string) bool {
	if m := npmLifecycle.FindStringSubmatch(line); m != nil {
		p.endNPM()
		p.npmScript = &npmFailure{script: m[1]}
		return true
	}
	f := p.npmScript
	if f == nil {
		return false
	}
	if m := npmDetail.FindStringSubmatch(line); m != nil {
		switch m[1] {
		case "code":
			f.code = m[2]
		case "workspace":
			f.workspace = m[2]
		case "command":
			if m[2] != "failed" {
				f.command = m[2]
			}
		}
		return true
	}
	if strings.HasPrefix(line, "npm error ") || strings.HasPrefix(line, "npm ERR! ") {
		return true
	}
	p.endNPM()
	return false
}

// endNPM ends the failed script being read.
func (p *TAPParser) endNPM() {
	f := p.npmScript
	p.npmScript = nil
	if f == nil || f.script == "test" || f.workspace == "" || p.npmSeen[f.workspace] || len(p.npmFailed) >= maxCases {
		return
	}
	p.npmSeen[f.workspace] = true
	msg := fmt.Sprintf("its script %s failed (exit status %s) before its tests ran", f.script, f.code)
	if f.command != "" {
		msg += ": " + f.command
	}
	p.npmFailed = append(p.npmFailed, artifact.Case{Name: clip.Runes("[npm workspace "+f.workspace+"]", 1000), Status: StatusFail, Message: clip.Runes(msg, MaxMessage)})
}

// pnpmLine follows a pnpm recursive run (pnpm -r test): which members
// started and ended, and the error of one that stops at its first
// failing member; and yarn workspaces foreach's error for a failing
// workspace. It reports whether the line was the package manager's
// alone.
func (p *TAPParser) pnpmLine(line string) bool {
	if m := pnpmScope.FindStringSubmatch(line); m != nil {
		if note := p.pnpmNote(); note != "" && len(p.pnpmNotes) < 10 {
			p.pnpmNotes = append(p.pnpmNotes, note) // an earlier run of the script
		}
		n, _ := strconv.Atoi(m[1])
		p.pnpm = &pnpmRun{scope: n, seen: map[string]bool{}, ended: map[string]bool{}}
		return true
	}
	r := p.pnpm
	if m := pnpmFirstFail.FindStringSubmatch(line); m != nil {
		if r == nil {
			r = &pnpmRun{seen: map[string]bool{}, ended: map[string]bool{}}
			p.pnpm = r
		}
		if r.firstFail == "" {
			r.firstFail, r.script = clip.Runes(m[1], 200), clip.Runes(m[2], 200)
		}
		return true
	}
	if m := yarnForeachFail.FindStringSubmatch(line); m != nil {
		if p.yarnFailed == "" {
			p.yarnFailed, p.yarnCode = clip.Runes(m[1], 200), m[2]
		}
		return true
	}
	if r == nil {
		return false
	}
	if m := pnpmEnd.FindStringSubmatch(line); m != nil && r.seen[clip.Runes(m[1], 100)] {
		r.ended[clip.Runes(m[1], 100)] = true
		return true
	}
	m := pnpmStart.FindStringSubmatch(line)
	if m != nil {
		r.prefixed = true
	} else if m = pnpmStream.FindStringSubmatch(line); m == nil {
		return false
	}
	if name := clip.Runes(m[1], 100); len(r.started) < maxPnpmMembers && !r.seen[name] {
		r.seen[name] = true
		r.started = append(r.started, name)
		if r.prefixed && name == m[1] {
			if r.startScript == nil {
				r.startScript = map[string]string{}
			}
			r.startScript[name] = m[2]
		}
	}
	return false
}

// maxPnpmParsers bounds the members whose output is read apart; the lines
// of any further member are read as the script's own.
const maxPnpmParsers = 1000

// memberLine hands a line of a prefixed pnpm recursive run that a started
// member printed ("packages/a test: ok 1 - adds") to that member's own
// parser, without pnpm's prefix. It reports whether it did.
func (p *TAPParser) memberLine(line string) bool {
	r := p.pnpm
	if r == nil || !r.prefixed || pnpmEnd.MatchString(line) {
		return false
	}
	dir, rest, ok := strings.Cut(line, " ")
	if !ok || !r.seen[dir] {
		return false
	}
	rest, ok = strings.CutPrefix(rest, r.startScript[dir]+": ")
	if !ok {
		return false
	}
	sub := p.members[dir]
	if sub == nil {
		if len(p.members) >= maxPnpmParsers {
			return false
		}
		if p.members == nil {
			p.members = map[string]*TAPParser{}
		}
		sub = NewTAPParser(nil)
		p.members[dir] = sub
		p.memberOrder = append(p.memberOrder, dir)
	}
	sub.line(rest)
	return true
}

// withMembers adds what each member of a prefixed pnpm run reported to
// res: its cases named "folder > test", its counts to the totals.
func (p *TAPParser) withMembers(res Result) Result {
	var parts []Result
	for _, dir := range p.memberOrder {
		m := p.members[dir].Finish()
		if !m.Recognised {
			continue
		}
		for i := range m.Cases {
			m.Cases[i].Name = clip.Runes(dir+" > "+m.Cases[i].Name, 1000)
		}
		for i, n := range m.Notes {
			m.Notes[i] = dir + ": " + n
		}
		parts = append(parts, m)
	}
	if len(parts) == 0 {
		return res
	}
	sum := res.Summary()
	withTotals := res.Totals != nil
	for _, m := range parts {
		s := m.Summary()
		sum.Passed += s.Passed
		sum.Failed += s.Failed
		sum.Skipped += s.Skipped
		sum.Error += s.Error
		withTotals = withTotals || m.Totals != nil
		res.Cases = append(slices.Clip(res.Cases), m.Cases...)
		res.Notes = append(slices.Clip(res.Notes), m.Notes...)
	}
	res.Recognised = true
	if withTotals {
		res.Totals = &sum
	}
	return res
}

// pnpmNote says which members a pnpm recursive run that stopped at its
// first failing member did not run or did not let finish: their tests
// are in no count. "" when the run did not stop early.
func (p *TAPParser) pnpmNote() string {
	r := p.pnpm
	if r == nil || r.firstFail == "" {
		return ""
	}
	var unfinished []string
	if r.prefixed {
		for _, m := range r.started {
			if !r.ended[m] {
				unfinished = append(unfinished, m)
			}
		}
	}
	msg := fmt.Sprintf("pnpm's recursive run stopped at its first failing member (%s, script %s), as it does unless told --no-bail", r.firstFail, r.script)
	switch notRun := r.scope - len(r.started); {
	case r.scope > 0 && notRun > 0:
		msg += fmt.Sprintf(": of the %d workspace projects in its scope, %d never started", r.scope, notRun)
	case r.scope > 0:
		msg += fmt.Sprintf(": all %d workspace projects in its scope started", r.scope)
	default:
		msg += ": members after it may not have run"
	}
	if len(r.started) > 0 {
		msg += " (started: " + listSome(r.started) + ")"
	}
	switch {
	case len(unfinished) > 0:
		msg += fmt.Sprintf("; %d stopped before they finished (%s)", len(unfinished), listSome(unfinished))
	case !r.prefixed && len(r.started) > 0:
		msg += "; pnpm's output does not say which of them finished"
	}
	return msg + "; the tests of members that did not run or finish are in no count: pnpm -r --no-bail " + r.script + " (--no-bail in the project's test script) runs every member and reports every failure"
}

// listSome joins the first names of a list, saying how many more.
func listSome(names []string) string {
	const most = 20
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// jestLine reads Jest's FAIL and PASS lines and the failures named under
// a FAIL line, and the message of the failure before (its next line that
// is not blank).
func (p *TAPParser) jestLine(line string) bool {
	fillMessage(p.jestNamed, &p.jestMsg, line)
	if m := jestFile.FindStringSubmatch(line); m != nil {
		p.jestFailFile = ""
		if m[1] == "FAIL" {
			p.jestFailFile = m[2]
		}
		return true
	}
	if p.jestFailFile == "" {
		return false
	}
	m := jestFailure.FindStringSubmatch(line)
	if m == nil || m[1] == "Console" {
		return false
	}
	name := clip.Runes(p.jestFailFile+" > "+strings.TrimSpace(m[1]), 1000)
	if p.jestSeen[name] || len(p.jestNamed) >= maxCases {
		return true
	}
	p.jestSeen[name] = true
	if m[1] == "Test suite failed to run" {
		p.jestNotLoaded++
	}
	p.jestNamed = append(p.jestNamed, artifact.Case{Name: name, Status: StatusFail, Message: "test failed"})
	i := len(p.jestNamed) - 1
	p.jestMsg = &i
	return true
}

// avaLine reads AVA's test and summary lines.
func (p *TAPParser) avaLine(line string) bool {
	add := func(c artifact.Case) bool {
		if len(p.ava) < maxCases {
			p.ava = append(p.ava, c)
		}
		return true
	}
	if m := avaFail.FindStringSubmatch(line); m != nil {
		return add(artifact.Case{Name: clip.Runes(m[1], 1000), Status: StatusFail, Message: "test failed"})
	}
	if m := avaPass.FindStringSubmatch(line); m != nil {
		if m[1] != "" {
			return add(artifact.Case{Name: clip.Runes(m[2], 1000), Status: StatusSkip, Message: "expected failure (test.failing)"})
		}
		return add(artifact.Case{Name: clip.Runes(m[2], 1000), Status: StatusPass})
	}
	if m := avaSkip.FindStringSubmatch(line); m != nil {
		return add(artifact.Case{Name: clip.Runes(m[2], 1000), Status: StatusSkip, Message: m[1]})
	}
	if m := avaTotal.FindStringSubmatch(line); m != nil {
		p.nAva++
		what := m[2]
		if m[3] != "" {
			what = "known failure"
		}
		p.avaTotal[what] += count(m[1])
		return true
	}
	return false
}

// fillMessage gives the failure cases[*want], which awaits its message,
// the line when it is not blank; want is then nil.
func fillMessage(cases []artifact.Case, want **int, line string) {
	if *want == nil {
		return
	}
	if msg := strings.TrimSpace(line); msg != "" {
		cases[**want].Message = clip.Runes(msg, MaxMessage)
		*want = nil
	}
}

// addNamed records a failure named by Mocha's or Vitest's report; its
// message is the next line that is not blank.
func (p *TAPParser) addNamed(c artifact.Case) {
	if len(p.named) >= maxCases {
		return
	}
	p.named = append(p.named, c)
	i := len(p.named) - 1
	p.wantMsg = &i
}

func (p *TAPParser) setPath(level int, name string) {
	if level > 64 {
		level = 64
	}
	for len(p.path) <= level {
		p.path = append(p.path, "")
	}
	p.path = p.path[:level+1]
	p.path[level] = name
}

// point starts a test point; it becomes a case when its YAML block (if
// any) has been read.
func (p *TAPParser) point(indent int, ok bool, rest string) {
	p.tap = true
	desc, status, msg := rest, StatusPass, ""
	if !ok {
		status = StatusFail
	}
	if m := tapDirective.FindStringSubmatchIndex(rest); m != nil {
		kind := strings.ToLower(rest[m[2]:m[3]])
		desc = strings.TrimSpace(rest[:m[2]])
		desc = strings.TrimSpace(strings.TrimSuffix(desc, "#"))
		msg = strings.TrimSpace(rest[m[4]:m[5]])
		switch {
		case kind == "skip":
			status = StatusSkip
		case kind == "todo":
			status = StatusSkip
			msg = strings.TrimSpace("todo " + msg)
		}
	}
	desc = strings.ReplaceAll(strings.TrimSpace(desc), `\#`, "#")
	level := indent / 4
	name := desc
	if level < len(p.path) && p.path[level] == desc && level > 0 {
		name = strings.Join(p.path[:level+1], " > ")
	} else if level > 0 && level <= len(p.path) {
		name = strings.Join(append(append([]string{}, p.path[:level]...), desc), " > ")
	}
	if strings.TrimSpace(name) == "" {
		name = "(unnamed)"
	}
	p.pending = &tapPoint{c: artifact.Case{Name: clip.Runes(name, 1000), Status: status, Message: clip.Runes(msg, MaxMessage)}, indent: indent}
}

// flush turns the pending test point into a case.
func (p *TAPParser) flush() {
	pt := p.pending
	if pt == nil {
		return
	}
	p.pending = nil
	if pt.suite {
		return
	}
	c := pt.c
	if c.Status == StatusFail {
		c.Output = strings.TrimSpace(pt.out.String())
		if c.Message == "" {
			c.Message = clip.Runes(pt.errMsg, MaxMessage)
		}
		if c.Message == "" {
			c.Message = "test failed"
		}
	}
	p.cases = append(p.cases, c)
}

// Finish returns the cases read.
func (p *TAPParser) Finish() Result {
	p.flush()
	p.endNPM()
	res := p.withMembers(p.finish())
	if n := len(p.npmFailed); n > 0 && res.Recognised {
		res.Cases = append(slices.Clip(res.Cases), p.npmFailed...)
		if res.Totals != nil {
			res.Totals.Failed += n
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%d npm workspace member(s) stopped before their tests ran (a script before test failed; each is counted as one failed test): a build the tests need may belong in [test] setup", n))
	}
	res.Notes = append(slices.Clip(res.Notes), p.pnpmNotes...)
	if note := p.pnpmNote(); note != "" {
		res.Notes = append(res.Notes, note)
	}
	if p.yarnFailed != "" {
		res.Notes = append(res.Notes, fmt.Sprintf("yarn workspaces foreach stopped at a failing workspace (%s, exit code %s), as it always does: workspaces it had not run by then did not run, and their tests are in no count; yarn has no option to go on, so yarn workspaces foreach -A --exclude NAME run test runs the rest", p.yarnFailed, p.yarnCode))
	}
	return res
}

func (p *TAPParser) finish() Result {
	others := p.nSpec+p.nJest+p.nMocha+p.nVitest+p.nAva > 0
	var tap *Result
	if p.tap {
		res := Result{Cases: p.cases, Recognised: true}
		if p.nTotals > 0 {
			sum := Summarize(p.cases)
			t := p.totals
			if t["tests"] != len(p.cases) || t["pass"] != sum.Passed || t["fail"]+t["cancelled"] != sum.Failed {
				res.Notes = append(res.Notes, fmt.Sprintf("the runner's totals say %d tests (%d passed, %d failed, %d cancelled, %d skipped, %d todo); orch read %d test points (%d passed, %d failed, %d skipped)",
					t["tests"], t["pass"], t["fail"], t["cancelled"], t["skipped"], t["todo"], len(p.cases), sum.Passed, sum.Failed, sum.Skipped))
			}
		}
		if !others {
			return res
		}
		if p.nTotals == 0 {
			// TAP without node's "# tests" totals beside another
			// runner's summary: a test printed it (a Vitest test running
			// node:test), it is not the suite's results.
			res.Notes = append(res.Notes, fmt.Sprintf("TAP lines (%d test points, no \"# tests\" totals) among the output of a runner with its own summary were taken for a test's output and not counted", len(p.cases)))
			res.Cases = nil
		}
		tap = &res
	}
	if !others {
		return Result{}
	}
	// The totals of every run the script made, whichever runner: node's
	// spec reporter, Jest, Mocha, Vitest (and node's TAP with its totals).
	s, j, m, v := p.spec, p.jest, p.mocha, p.vitest
	res := Result{Cases: append(p.specCase, p.named...), Recognised: true, Totals: &artifact.Summary{
		Passed:  s["pass"] + j["passed"] + m["passing"] + v["passed"],
		Failed:  s["fail"] + s["cancelled"] + j["failed"] + m["failing"] + v["failed"],
		Skipped: s["skipped"] + s["todo"] + j["skipped"] + j["todo"] + m["pending"] + v["skipped"] + v["todo"] + v["expected fail"],
	}}
	if n := p.vitestNotLoaded; n > 0 && p.nVitest > 0 {
		// Like Jest's, below.
		res.Totals.Failed += n
		res.Notes = append(res.Notes, fmt.Sprintf("Vitest: %d test file(s) failed to load (its \"Failed Suites\"), left out of its Tests count; each is counted as one failed test", n))
	}
	if p.nJest > 0 {
		res.Cases = append(res.Cases, p.jestNamed...)
		if n := p.jestNotLoaded; n > 0 {
			// Jest leaves a test file that did not load out of its
			// "Tests:" count (only "Test Suites: N failed" has it):
			// each is a failure of its own here, or the counts would
			// show none.
			res.Totals.Failed += n
			res.Notes = append(res.Notes, fmt.Sprintf("Jest: %d test file(s) failed to run (\"Test suite failed to run\"), left out of its Tests: count; each is counted as one failed test", n))
		}
	}
	if p.nAva > 0 {
		// AVA's summary leaves out what passed once something failed:
		// its test lines are the counts, checked against the summary.
		a := Summarize(p.ava)
		res.Totals.Passed += a.Passed
		res.Totals.Failed += a.Failed
		res.Totals.Skipped += a.Skipped
		for _, c := range p.ava {
			if c.Status == StatusFail {
				res.Cases = append(res.Cases, c)
			}
		}
		t := p.avaTotal
		if t["failed"] != a.Failed || t["skipped"]+t["todo"]+t["known failure"] != a.Skipped || t["passed"] != 0 && t["passed"] != a.Passed {
			res.Notes = append(res.Notes, fmt.Sprintf("AVA's summary says %d passed, %d failed, %d skipped, %d todo, %d known failures; orch read %d passed, %d failed, %d skipped from its test lines", t["passed"], t["failed"], t["skipped"], t["todo"], t["known failure"], a.Passed, a.Failed, a.Skipped))
		}
	}
	if tap != nil {
		t := Summarize(tap.Cases)
		res.Totals.Passed += t.Passed
		res.Totals.Failed += t.Failed
		res.Totals.Skipped += t.Skipped
		res.Cases = append(slices.Clip(tap.Cases), res.Cases...)
		res.Notes = append(res.Notes, tap.Notes...)
	}
	if n := j["passed"] + j["failed"] + j["skipped"] + j["todo"]; p.nJest > 0 && n != j["total"] {
		res.Notes = append(res.Notes, fmt.Sprintf("Jest's summaries say %d tests in total but count %d by status", j["total"], n))
	}
	if n := v["passed"] + v["failed"] + v["skipped"] + v["todo"] + v["expected fail"]; p.nVitest > 0 && n != v["total"] {
		res.Notes = append(res.Notes, fmt.Sprintf("Vitest's summaries say %d tests in total but count %d by status", v["total"], n))
	}
	return res
}
