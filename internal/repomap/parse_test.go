package repomap

import (
	"fmt"
	"strings"
	"testing"
)

func defsOf(t *testing.T, l Lang, src string) []Def {
	t.Helper()
	if !DefinitionsAvailable {
		t.Skip("built without cgo: no tree-sitter")
	}
	e := newExtractor()
	defer e.close()
	defs, err := e.definitions(t.Context(), l, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return defs
}

func render(defs []Def) string {
	var b strings.Builder
	for _, d := range defs {
		fmt.Fprintf(&b, "%d %s %s | %s\n", d.Line, d.Kind, d.Name, d.Sig)
	}
	return b.String()
}

func TestDefinitions(t *testing.T) {
	for _, tc := range []struct {
		name string
		lang Lang
		src  string
		want string
	}{
		{"go", LangGo, `package cobra

import "fmt"

const Version = "1"

const (
	minDist = 2
)

var (
	ErrBad = fmt.Errorf("bad")
)

type Alias = string

// Command is a command.
type Command struct {
	Use string
	SuggestionsMinimumDistance int
}

type Runner interface {
	Run(args []string) error
}

func (c *Command) Execute(
	args []string,
) error {
	type local struct{ hidden int }
	helper := func() {}
	_ = helper
	return nil
}

func New() *Command { return &Command{} }
`, `5 const Version | const Version = "1"
8 const minDist | const minDist = 2
12 var ErrBad | var ErrBad = fmt.Errorf("bad")
15 type Alias | type Alias = string
18 type Command | type Command struct
19 field Use | Use string
20 field SuggestionsMinimumDistance | SuggestionsMinimumDistance int
23 type Runner | type Runner interface
24 method Run | Run(args []string) error
27 method Execute | func (c *Command) Execute( args []string, ) error
36 func New | func New() *Command
`},
		{"python", LangPython, `import os

LIMIT = 3

class Fetcher(Base):
    retries = 2

    def fetch(self, url: str) -> bytes:
        def inner():
            pass
        return b""

async def main():
    pass
`, `3 var LIMIT | LIMIT = 3
5 class Fetcher | class Fetcher(Base)
6 field retries | retries = 2
8 func fetch | def fetch(self, url: str) -> bytes
13 func main | async def main()
`},
		{"javascript", LangJavaScript, `const limit = 3;
export const fetchAll = async (urls) => {
  const inner = 1;
  return urls;
};
function retry(fn, n) {
  function local() {}
  return fn();
}
class Client {
  get(url) { return url; }
}
module.exports.helper = function () {};
`, `1 var limit | const limit = 3
2 var fetchAll | const fetchAll = async (urls) =>
6 func retry | function retry(fn, n)
10 class Client | class Client
11 method get | get(url)
13 var helper | module.exports.helper = function () {}
`},
		{"typescript", LangTypeScript, `export interface Options {
  retries: number;
}
export type Id = string;
enum Color { Red }
abstract class Base {
  abstract run(): void;
}
export class Client extends Base {
  private count = 0;
  run(): void {}
}
export function make(o: Options): Client { return new Client(); }
`, `1 interface Options | interface Options
2 field retries | retries: number
4 type Id | type Id = string
5 type Color | enum Color
6 class Base | abstract class Base
7 method run | abstract run(): void
9 class Client | class Client extends Base
10 field count | private count = 0
11 method run | run(): void
13 func make | function make(o: Options): Client
`},
		{"rust", LangRust, `pub const MAX: usize = 3;
pub struct Client {
    pub retries: u32,
}
pub enum Mode { Fast, Slow }
pub trait Fetch {
    fn fetch(&self) -> Vec<u8>;
}
impl Client {
    pub fn new() -> Self {
        fn helper() {}
        Client { retries: 0 }
    }
}
macro_rules! retry { () => {} }
mod inner {}
`, `1 const MAX | pub const MAX: usize = 3
2 type Client | pub struct Client
3 field retries | pub retries: u32
5 type Mode | pub enum Mode
5 const Fast | Fast
5 const Slow | Slow
6 interface Fetch | pub trait Fetch
7 func fetch | fn fetch(&self) -> Vec<u8>
10 func new | pub fn new() -> Self
15 macro retry | macro_rules! retry { () => {} }
16 module inner | mod inner
`},
		{"java", LangJava, `package a;

public class Client extends Base implements Fetch {
    public static final int MAX = 3;
    private String name;

    public Client(String name) { this.name = name; }

    @Override
    public byte[] fetch(String url) throws IOException {
        return null;
    }
}

interface Fetch { byte[] fetch(String url); }

enum Mode { FAST, SLOW }
`, `3 class Client | public class Client extends Base implements Fetch
4 field MAX | public static final int MAX = 3
5 field name | private String name
7 method Client | public Client(String name)
10 method fetch | @Override public byte[] fetch(String url) throws IOException
15 interface Fetch | interface Fetch
15 method fetch | byte[] fetch(String url)
17 type Mode | enum Mode
17 const FAST | FAST
17 const SLOW | SLOW
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := render(defsOf(t, tc.lang, tc.src))
			if got != tc.want {
				t.Errorf("definitions:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// FuzzOneLine: oneLine's pass over printable ASCII says what the general
// rule (printable, strings.Fields, joined by spaces) says, on any bytes.
func FuzzOneLine(f *testing.F) {
	for _, s := range []string{"func (c *Command) Execute(\n\targs []string,\n) error {", "  a\v\fb\r\n ", "", " ", "x\x00y", "é\u00a0\u0085z", "\x7f\x1b[31m", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := oneLine(b), strings.Join(strings.Fields(printable(b)), " "); got != want {
			t.Fatalf("oneLine(%q) = %q, want %q", b, got, want)
		}
	})
}
