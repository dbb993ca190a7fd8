package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/orchdev/orch/internal/gittest"
	"github.com/orchdev/orch/internal/task"
)

// TestDecodeLine: what each line becomes, or the error it is answered
// with and the id of that answer.
func TestDecodeLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		line    string
		batches bool
		n       int    // messages
		code    int64  // 0: accepted
		id      any    // id of the error answer
		msg     string // in the error's message
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, true, 1, 0, nil, ""},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, true, 1, 0, nil, ""},
		{"blank", "  \r", true, 0, 0, nil, ""},
		{"open brace", `{`, true, 0, jsonrpc.CodeParseError, nil, "Parse error"},
		{"two values", `{} {}`, true, 0, jsonrpc.CodeParseError, nil, "Parse error"},
		{"NUL bytes", "\x00\x00\x00", true, 0, jsonrpc.CodeParseError, nil, "Parse error"},
		{"NUL in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\x00\"}", true, 0, jsonrpc.CodeParseError, nil, "Parse error"},
		{"empty batch", `[]`, true, 0, jsonrpc.CodeInvalidRequest, nil, "empty batch"},
		{"null", `null`, true, 0, jsonrpc.CodeInvalidRequest, nil, "Invalid Request"},
		{"a number", `7`, true, 0, jsonrpc.CodeInvalidRequest, nil, "Invalid Request"},
		{"version 1.0", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, true, 0, jsonrpc.CodeInvalidRequest, int64(7), "version"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, true, 0, jsonrpc.CodeInvalidRequest, nil, "Invalid Request"},
		{"deep nesting", strings.Repeat("[", 200000) + strings.Repeat("]", 200000), true, 0, jsonrpc.CodeParseError, nil, "deeper than 100"},
		{"deep in an object", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 101) + `}`, true, 0, jsonrpc.CodeParseError, nil, "deeper"},
		{"brackets in strings do not count", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"a":"` + strings.Repeat(`[{\"`, 500) + `"}}`, true, 1, 0, nil, ""},
		{"batch", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"}]`, true, 2, 0, nil, ""},
		{"batch after 2025-06-18", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, false, 0, jsonrpc.CodeInvalidRequest, nil, "batches are not supported"},
		{"batch with a bad element", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"1.0","id":2}]`, true, 0, jsonrpc.CodeInvalidRequest, nil, "batch element 1"},
		{"batch with an id twice", `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"ping"}]`, true, 0, jsonrpc.CodeInvalidRequest, nil, "used twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msgs, _, lerr := decodeLine([]byte(c.line), c.batches)
			if c.code == 0 {
				if lerr != nil || len(msgs) != c.n {
					t.Fatalf("got %d messages, %v; want %d", len(msgs), lerr, c.n)
				}
				return
			}
			if lerr == nil {
				t.Fatalf("accepted (%d messages), want error %d", len(msgs), c.code)
			}
			if lerr.code != c.code || lerr.id.Raw() != c.id || !strings.Contains(lerr.msg, c.msg) {
				t.Fatalf("error %d %q id %v; want %d containing %q, id %v", lerr.code, lerr.msg, lerr.id.Raw(), c.code, c.msg, c.id)
			}
		})
	}
}

// FuzzDecodeLine: any line is either messages or an error answer with a
// JSON-RPC error code; nothing panics, and a refused line is answered
// with an id that is null or the line's own.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{`{`, `[]`, `null`, "\x00", `{"jsonrpc":"1.0","id":1}`, `{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"jsonrpc":"2.0","id":"a","result":{}}`, `"\\"[[[["`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, line []byte, batches bool) {
		msgs, _, lerr := decodeLine(line, batches)
		if lerr == nil {
			if len(strings.TrimSpace(string(line))) > 0 && len(msgs) == 0 {
				t.Fatalf("%q: no messages and no error", line)
			}
			return
		}
		if lerr.code != jsonrpc.CodeParseError && lerr.code != jsonrpc.CodeInvalidRequest {
			t.Fatalf("%q: code %d", line, lerr.code)
		}
		if len(msgs) != 0 {
			t.Fatalf("%q: messages and an error", line)
		}
	})
}

// TestStdioBatches: before protocol version 2025-06-18 a batch is answered
// with one array (its calls only); once the session negotiated 2025-06-18
// a batch is answered with an error and the session goes on.
func TestStdioBatches(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		version string
		want    string // start of the answer to the batch
	}{
		{"2025-03-26", `[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]`},
		{"2025-06-18", `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: JSON-RPC batches are not supported from protocol version 2025-06-18 on"}}`},
	} {
		t.Run(c.version, func(t *testing.T) {
			t.Parallel()
			dir, _ := gittest.Seed(t, map[string]string{"README.md": "# demo\n"})
			if _, _, err := task.InitProject(dir); err != nil {
				t.Fatal(err)
			}
			srv, err := New(Options{Dir: dir, Version: "test", Wait: 2 * time.Second, Poll: time.Hour, Environ: os.Environ, Getenv: os.Getenv})
			if err != nil {
				t.Fatal(err)
			}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- srv.Run(ctx, Stdio(inR, outW)); outW.Close() }()
			out := bufio.NewReader(outR)
			send := func(line string) {
				t.Helper()
				if _, err := io.WriteString(inW, line+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			recv := func() string {
				t.Helper()
				line, err := out.ReadString('\n')
				if err != nil {
					t.Fatalf("read an answer: %v", err)
				}
				return strings.TrimSpace(line)
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + c.version + `","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}`)
			var init struct {
				Result struct {
					ProtocolVersion string `json:"protocolVersion"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(recv()), &init); err != nil || init.Result.ProtocolVersion != c.version {
				t.Fatalf("initialize: %v %+v", err, init)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			send(`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
			if got := recv(); got != c.want {
				t.Fatalf("answer to the batch:\n%s\nwant\n%s", got, c.want)
			}
			send(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
			if got := recv(); got != `{"jsonrpc":"2.0","id":4,"result":{}}` {
				t.Fatalf("answer to a ping after the batch: %s", got)
			}
			inW.Close()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("session ended with %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the session did not end at the end of its input")
			}
		})
	}
}
