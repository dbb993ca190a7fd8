package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRefusedTools(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
		want   bool
	}{
		{400, "registry.ollama.ai/library/gemma2:2b does not support tools", true},
		{400, `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, true},
		{404, "No endpoints found that support tool use.", true},
		{422, "Unrecognized request argument supplied: functions", true},
		{400, "This model does not support function calling", true},
		{400, `model "qwen9" not found, try pulling it first`, false},
		{400, "This model's maximum context length is 8192 tokens", false},
		{429, "rate limit reached for tool calls", false},
		{401, "tools are for paying users", false},
		{500, "tool parser crashed", false},
		{400, "", false},
	} {
		if got := refusedTools(tc.status, tc.msg); got != tc.want {
			t.Errorf("refusedTools(%d, %q) = %v, want %v", tc.status, tc.msg, got, tc.want)
		}
	}
}

// A server that refuses the tools answers a *ToolsRefusedError naming
// what it said, whether its message is where the SDK looks ("error") or
// at the top level (vLLM); any other error stays what it was, and a
// request without tools is never classified as a refusal.
func TestOpenAIToolsRefused(t *testing.T) {
	for _, tc := range []struct {
		fixture string
		status  int
		want    string // in the refusal's message; "" = not a refusal
	}{
		{"openai/error_ollama_no_tools.json", 400, "does not support tools"},
		{"openai/error_vllm_no_tool_choice.json", 400, "--enable-auto-tool-choice"},
		{"openai/error_openrouter_no_tools.json", 404, "support tool use"},
		{"openai/error_model_not_found.json", 400, ""},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			for _, withToolsOffered := range []bool{true, false} {
				api := newFakeAPI(t, jsonAnswer(t, tc.status, tc.fixture))
				p := newTestOpenAI(t, api, &sleepRecorder{})
				req := Request{Role: "codegen", Messages: toolConversation()}
				if withToolsOffered {
					req.Tools = readTools
				} else {
					req.Messages = []Message{{Role: RoleUser, Content: "hello"}}
				}
				_, err := p.Complete(context.Background(), req)
				var tr *ToolsRefusedError
				refused := errors.As(err, &tr)
				if want := withToolsOffered && tc.want != ""; refused != want {
					t.Fatalf("tools offered %v: error %v (%T), refusal %v, want %v", withToolsOffered, err, err, refused, want)
				}
				if refused {
					if !strings.Contains(tr.Message, tc.want) || !strings.Contains(err.Error(), "refused tool calling") {
						t.Errorf("refusal %q does not say %q", err, tc.want)
					}
					var ae *APIError
					if !errors.As(err, &ae) || ae.StatusCode != tc.status {
						t.Errorf("the refusal does not carry the HTTP error: %v", err)
					}
				}
				if n := len(api.received()); n != 1 {
					t.Errorf("%d requests, want 1 (a refusal is not retried)", n)
				}
			}
		})
	}
}

func TestCommandToolsRefused(t *testing.T) {
	out, err := decodeCommandResponse([]byte(`{"tools_refused": "model llama3 has no tool template"}`), CommandProtocolV2)
	if err != nil || out.ToolsRefused != "model llama3 has no tool template" {
		t.Fatalf("decode: %+v, %v", out, err)
	}
	if _, err := decodeCommandResponse([]byte(`{"tools_refused": " "}`), CommandProtocolV2); err == nil || !strings.Contains(err.Error(), "tools_refused") {
		t.Errorf("a blank tools_refused: %v", err)
	}
	// Version 1 knows no such field: the answer needs text.
	if _, err := decodeCommandResponse([]byte(`{"tools_refused": "x"}`), 1); err == nil {
		t.Error("version 1 accepted an answer without text")
	}
}

func TestCommandV2ToolsRefusedCall(t *testing.T) {
	p := newToolCommand(t, CommandProtocolV2, "notools.sh")
	_, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: toolConversation(), Tools: readTools})
	var tr *ToolsRefusedError
	if !errors.As(err, &tr) || tr.Message != "model llama2 has no tool template" {
		t.Fatalf("error %v (%T), want a *ToolsRefusedError", err, err)
	}
	resp, err := p.Complete(context.Background(), Request{Role: "codegen", Messages: []Message{{Role: RoleUser, Content: "hi"}}})
	if err != nil || resp.Text != "plain answer" {
		t.Errorf("without tools: %+v, %v", resp, err)
	}
}
