package llm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

func newTestCommand(t *testing.T, timeout time.Duration, script string, args ...string) Provider {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", "command", script))
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{
		Type:    TypeCommand,
		Name:    "local",
		Model:   "local-default",
		Command: append([]string{"/bin/sh", path}, args...),
		Timeout: timeout,
	}, env(), WithClock(func() time.Time { return fixedNow }))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCommandGood(t *testing.T) {
	reqFile := filepath.Join(t.TempDir(), "request.json")
	p := newTestCommand(t, 0, "good.sh", reqFile)
	schema, _ := SchemaFor(planAnswer{})
	req := basicRequest()
	req.Role = "plan_reviewer:risk"
	req.Schema, req.SchemaName = schema, "plan"
	var tokens []string
	req.OnToken = func(s string) { tokens = append(tokens, s) }

	resp, err := p.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	want := Response{Text: "Plan looks sound.", Usage: Usage{InputTokens: 120, OutputTokens: 7}, Model: "local-test-model", Provider: "local", StopReason: "stop"}
	if !reflect.DeepEqual(resp, want) {
		t.Errorf("response\n got %+v\nwant %+v", resp, want)
	}
	if len(tokens) != 1 || tokens[0] != want.Text {
		t.Errorf("tokens %q, want the whole text once", tokens)
	}
	data, err := os.ReadFile(reqFile)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatalf("request on stdin is not JSON: %v: %s", err, data)
	}
	jsonEqual(t, got, `{
		"version": 1,
		"role": "plan_reviewer:risk",
		"model": "local-default",
		"messages": [
			{"role": "system", "content": "You plan code changes."},
			{"role": "user", "content": "Add retry to the fetcher."}
		],
		"schema": `+string(schema)+`,
		"schema_name": "plan",
		"max_tokens": 512,
		"temperature": 0.2
	}`)
}

func TestCommandJSONAnswer(t *testing.T) {
	p := newTestCommand(t, 0, "json.sh")
	resp, err := p.Complete(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != `{"ok":true,"issues":[]}` || resp.Model != "local-default" {
		t.Errorf("response %+v", resp)
	}
}

func TestCommandFailures(t *testing.T) {
	for _, tc := range []struct {
		script string
		check  func(t *testing.T, err error)
	}{
		{"garbage.sh", func(t *testing.T, err error) {
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "loading model weights") {
				t.Errorf("error %v (%T), want *ProtocolError quoting stdout", err, err)
			}
		}},
		{"fail.sh", func(t *testing.T, err error) {
			var ce *CommandError
			if !errors.As(err, &ce) || ce.Status != 3 || !strings.Contains(ce.Stderr, "backend unavailable") {
				t.Fatalf("error %v (%T), want *CommandError with exit 3 and stderr", err, err)
			}
			if !strings.Contains(err.Error(), "exited with status 3") || !strings.Contains(err.Error(), "backend unavailable") {
				t.Errorf("error text %q lacks the status or stderr", err)
			}
		}},
		{"refuse.sh", func(t *testing.T, err error) {
			var re *RefusalError
			if !errors.As(err, &re) || re.Message != "policy forbids this" {
				t.Errorf("error %v (%T), want *RefusalError", err, err)
			}
		}},
		{"huge.sh", func(t *testing.T, err error) {
			var pe *ProtocolError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "more than") {
				t.Errorf("error %v (%T), want *ProtocolError about the stdout limit", err, err)
			}
		}},
	} {
		t.Run(tc.script, func(t *testing.T) {
			p := newTestCommand(t, 0, tc.script)
			_, err := p.Complete(context.Background(), basicRequest())
			tc.check(t, err)
		})
	}
}

func TestCommandNotFound(t *testing.T) {
	p, err := New(Config{Type: TypeCommand, Command: []string{filepath.Join(t.TempDir(), "no-such-model")}}, env())
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Complete(context.Background(), basicRequest())
	var ce *CommandError
	if !errors.As(err, &ce) || ce.Status != -1 {
		t.Errorf("error %v (%T), want *CommandError that did not start", err, err)
	}
}

// readPids waits for the hang script to record its pids.
func readPids(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(data)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("pid file %q: %v", data, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// processGone reports whether pid no longer runs (absent or a zombie).
func processGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// assertGone waits until every pid has ended; the kill is asynchronous.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for !processGone(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func TestCommandCancelKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := newTestCommand(t, time.Minute, "hang.sh", pidFile)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Cancel once the script has started its child.
		for {
			if _, err := os.Stat(pidFile); err == nil {
				break
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	_, err := p.Complete(ctx, basicRequest())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	pids := readPids(t, pidFile)
	if len(pids) != 2 {
		t.Fatalf("pids %v, want the shell's and its child's", pids)
	}
	assertGone(t, pids)
}

func TestCommandTimeoutKillsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pids")
	p := newTestCommand(t, 300*time.Millisecond, "hang.sh", pidFile)
	_, err := p.Complete(context.Background(), basicRequest())
	var te *TimeoutError
	if !errors.As(err, &te) || te.Timeout != 300*time.Millisecond {
		t.Fatalf("error %v (%T), want *TimeoutError", err, err)
	}
	// The shell may not have got as far as recording its pids; whatever
	// it recorded must be gone.
	assertGone(t, readPids(t, pidFile))
}

func TestCommandLeftoverChildIsKilled(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := newTestCommand(t, 0, "leftover.sh", pidFile)
	resp, err := p.Complete(context.Background(), basicRequest())
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "done" {
		t.Errorf("text %q", resp.Text)
	}
	pids := readPids(t, pidFile)
	if len(pids) != 1 {
		t.Fatalf("pids %v", pids)
	}
	assertGone(t, pids)
}

func TestCommandConfig(t *testing.T) {
	_, err := New(Config{Type: TypeCommand}, env())
	var ce *ConfigError
	if !errors.As(err, &ce) {
		t.Errorf("error %v, want *ConfigError for a command provider without argv", err)
	}
}

func TestDecodeCommandResponse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    commandResponse
		wantErr string
	}{
		{"text", `{"text":"hi"}`, commandResponse{Text: "hi"}, ""},
		{"surrounding whitespace", " \n{\"text\":\"hi\"}\n\n", commandResponse{Text: "hi"}, ""},
		{"all fields", `{"text":"x","usage":{"input_tokens":1,"output_tokens":2},"model":"m","stop_reason":"stop","unknown":[1]}`,
			commandResponse{Text: "x", Usage: Usage{InputTokens: 1, OutputTokens: 2}, Model: "m", StopReason: "stop"}, ""},
		{"json value", `{"json":{"b":[1, 2],"a":null}}`, commandResponse{Text: `{"b":[1,2],"a":null}`}, ""},
		{"empty text is an answer", `{"text":""}`, commandResponse{}, ""},
		{"refusal only", `{"refusal":"no"}`, commandResponse{Refusal: "no"}, ""},
		{"empty", "", commandResponse{}, "empty"},
		{"not an object", `["text"]`, commandResponse{}, "JSON object"},
		{"log line first", "starting\n{\"text\":\"x\"}", commandResponse{}, "JSON object"},
		{"two objects", `{"text":"a"}{"text":"b"}`, commandResponse{}, "more than one"},
		{"trailing junk", `{"text":"a"} done`, commandResponse{}, "more than one"},
		{"text not a string", `{"text":42}`, commandResponse{}, "not a string"},
		{"both", `{"text":"a","json":{}}`, commandResponse{}, "both"},
		{"neither", `{"model":"m"}`, commandResponse{}, "neither"},
		{"null text", `{"text":null}`, commandResponse{}, "neither"},
		{"negative usage", `{"text":"a","usage":{"input_tokens":-1}}`, commandResponse{}, "negative"},
		{"fractional usage", `{"text":"a","usage":{"input_tokens":1.5}}`, commandResponse{}, "not a valid"},
		{"truncated", `{"text":"a`, commandResponse{}, "not a valid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeCommandResponse([]byte(tc.in), CommandProtocolV1)
			if wantError(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}
