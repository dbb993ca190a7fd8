package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

// DefaultAnthropicModel is the model used when neither the configuration
// nor the request names one.
const DefaultAnthropicModel = anthropic.ModelClaudeSonnet5_5

// defaultAnthropicMaxTokens is sent when a request sets no limit: the
// messages API requires one.
const defaultAnthropicMaxTokens = 8192

// anthropicProvider speaks the messages API through the official SDK.
//
// A structured answer is asked for with a tool whose input_schema is the
// request's schema, which the model is told to call; the tool's input is
// returned as Response.Text. The tool is not forced with tool_choice:
// current models (Claude Sonnet 5.5, Opus 5.5) refuse a forced tool choice
// with HTTP 400, so a model that answers in text instead has that text
// checked by CompleteJSON like any answer. System messages go to the
// system parameter, in order.
//
// Prompt caching: a message marked CacheBreakpoint gets cache_control on
// its last block, and so does the last tool when the request has tools (the
// tools come first in the prompt and rarely change); the API allows four
// breakpoints, so the last ones marked are kept. Thinking blocks come back
// in Response.ProviderState and are sent again before the tool calls of
// their assistant turn, as the API requires in a tool loop.
type anthropicProvider struct {
	core  *httpCore
	model string
	tools bool // tool calling is offered (Config.Tools, default true)
	msgs  anthropic.MessageService
}

// maxCacheBreakpoints is the API's limit of cache_control markers.
const maxCacheBreakpoints = 4

func newAnthropic(cfg Config, core *httpCore) (Provider, error) {
	model := cfg.Model
	if model == "" {
		model = DefaultAnthropicModel
	}
	opts := []option.RequestOption{
		// No ANTHROPIC_* variable, profile or token file is read behind
		// orch's back: the key comes from the variable orch was told.
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(core.key),
		option.WithHTTPClient(core.opts.httpClient),
		option.WithMaxRetries(0),
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, &ConfigError{Provider: core.name, Msg: fmt.Sprintf("base URL %q is not an http(s) URL", redact(cfg.BaseURL, core.key))}
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	client := anthropic.NewClient(opts...)
	tools := cfg.Tools == nil || *cfg.Tools
	return &anthropicProvider{core: core, model: model, tools: tools, msgs: client.Messages}, nil
}

func (p *anthropicProvider) Name() string { return p.core.name }

// SupportsTools reports whether tool calling is offered (the messages API
// speaks it; the configuration may turn it off).
func (p *anthropicProvider) SupportsTools() bool { return p.tools }

func (p *anthropicProvider) Complete(ctx context.Context, req Request) (Response, error) {
	params, tool, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	var reqOpts []option.RequestOption
	if req.Temperature != nil {
		// The SDK's parameters no longer carry temperature; it is sent as
		// a raw field for the models that still accept it.
		reqOpts = append(reqOpts, option.WithJSONSet("temperature", *req.Temperature))
	}
	if req.OnToken != nil {
		return p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
			return p.stream(ctx, params, tool, req.OnToken, reqOpts, newStreamGuard(int(params.MaxTokens)))
		})
	}
	// The SDK refuses non-streaming calls it expects to be long unless a
	// request timeout is given; orch's own timeout bounds the call anyway.
	reqOpts = append(reqOpts, option.WithRequestTimeout(p.core.timeout))
	return p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
		guard := newStreamGuard(int(params.MaxTokens))
		msg, err := p.msgs.New(ctx, params, append(reqOpts, option.WithMiddleware(guard.middleware))...)
		if err != nil {
			if guard.cut() {
				// An answer body past any answer of the allowed length.
				return Response{Model: params.Model, StopReason: string(anthropic.StopReasonMaxTokens), Usage: Usage{OutputTokens: guard.outputTokens()}}, false, nil
			}
			return Response{}, false, p.sdkError(err)
		}
		r, err := p.response(msg, tool)
		return r, false, err
	})
}

// anthropicEffort maps a reasoning effort to output_config.effort, which
// has no "none" or "minimal".
func anthropicEffort(e string) anthropic.OutputConfigEffort {
	switch e {
	case "none", "minimal":
		return anthropic.OutputConfigEffortLow
	}
	return anthropic.OutputConfigEffort(e)
}

// thinkingBlock is one thinking block kept in ProviderState.
type thinkingBlock struct {
	Type      string `json:"type"` // thinking or redacted_thinking
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
}

// params builds the SDK request; tool is the structured answer's tool
// name, "" for a free-text answer.
func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, string, error) {
	var params anthropic.MessageNewParams
	if len(req.Tools) > 0 && !p.tools {
		return params, "", &ConfigError{Provider: p.core.name, Msg: "the request offers tools but tool calling is off for this provider (tools = false in its configuration)"}
	}
	// marked are the cache breakpoints, in prompt order; each sets one
	// cache_control (a system block is found by index: params.System
	// may still move).
	var marked []func()
	mark := func(cc *anthropic.CacheControlEphemeralParam, on bool) {
		if on && cc != nil {
			marked = append(marked, func() { *cc = anthropic.NewCacheControlEphemeralParam() })
		}
	}
	// lastUser is the index in params.Messages of a user message that
	// holds tool results, to which the next results and text are added.
	lastUser := -1
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			if k := len(params.System) - 1; m.CacheBreakpoint {
				marked = append(marked, func() { params.System[k].CacheControl = anthropic.NewCacheControlEphemeralParam() })
			}
			lastUser = -1
		case RoleUser, RoleTool:
			var block anthropic.ContentBlockParamUnion
			if m.Role == RoleTool {
				if m.ToolCallID == "" {
					return params, "", &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("message %d is a tool result without tool_call_id", i)}
				}
				block = anthropic.NewToolResultBlock(m.ToolCallID, m.Content, m.IsError)
			} else {
				block = anthropic.NewTextBlock(m.Content)
			}
			if lastUser >= 0 {
				content := &params.Messages[lastUser].OfUser.Content
				*content = append(*content, block)
			} else {
				params.Messages = append(params.Messages, anthropic.NewUserMessage(block))
				if m.Role == RoleTool {
					lastUser = len(params.Messages) - 1
				}
			}
			content := params.Messages[len(params.Messages)-1].OfUser.Content
			mark(content[len(content)-1].GetCacheControl(), m.CacheBreakpoint)
			if m.Role == RoleUser {
				lastUser = -1
			}
		case RoleAssistant:
			lastUser = -1
			var blocks []anthropic.ContentBlockParamUnion
			if len(m.ProviderState) > 0 {
				var thinking []thinkingBlock
				if err := json.Unmarshal(m.ProviderState, &thinking); err != nil {
					return params, "", &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("message %d: provider_state is not this provider's: %v", i, err)}
				}
				for _, t := range thinking {
					switch t.Type {
					case "thinking":
						blocks = append(blocks, anthropic.NewThinkingBlock(t.Signature, t.Thinking))
					case "redacted_thinking":
						blocks = append(blocks, anthropic.NewRedactedThinkingBlock(t.Data))
					}
				}
			}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				var input any = json.RawMessage(toolParameters(c.Arguments))
				if !isJSONObject(c.Arguments) {
					// The API takes only an object; what the model sent
					// instead was answered with a tool error.
					input = map[string]any{}
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(blocks...))
			mark(blocks[len(blocks)-1].GetCacheControl(), m.CacheBreakpoint)
		default:
			return params, "", &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("message %d has unknown role %q", i, m.Role)}
		}
	}
	if len(params.Messages) == 0 {
		return params, "", &ConfigError{Provider: p.core.name, Msg: "request has no user message"}
	}
	params.Model = p.model
	if req.Model != "" {
		params.Model = req.Model
	}
	params.MaxTokens = defaultAnthropicMaxTokens
	if req.MaxTokens > 0 {
		params.MaxTokens = int64(req.MaxTokens)
	}
	if req.ReasoningEffort != "" {
		params.OutputConfig.Effort = anthropicEffort(req.ReasoningEffort)
	}
	for _, t := range req.Tools {
		tp, err := p.toolParam(t.Name, t.Description, toolParameters(t.Parameters))
		if err != nil {
			return params, "", err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	tool := ""
	if req.Schema != nil {
		tool = schemaName(req.SchemaName)
		tp, err := p.toolParam(tool, fmt.Sprintf("Record the %s. Call this tool exactly once with the complete answer as its input.", tool), req.Schema)
		if err != nil {
			return params, "", err
		}
		params.Tools = append(params.Tools, anthropic.ToolUnionParam{OfTool: tp})
	}
	toolMark := 0
	if len(params.Tools) > 0 && len(marked) > 0 {
		// The tools precede everything in the prompt: cached with the
		// first breakpoint anyway, marked to survive a change after them.
		params.Tools[len(params.Tools)-1].OfTool.CacheControl = anthropic.NewCacheControlEphemeralParam()
		toolMark = 1
	}
	if over := len(marked) + toolMark - maxCacheBreakpoints; over > 0 {
		marked = marked[over:]
	}
	for _, set := range marked {
		set()
	}
	return params, tool, nil
}

// toolParam builds a tool from its JSON schema, which must be an object.
func (p *anthropicProvider) toolParam(name, description string, raw json.RawMessage) (*anthropic.ToolParam, error) {
	schema, err := objectSchema(p.core.name, raw)
	if err != nil {
		return nil, err
	}
	input := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
	for k, v := range schema {
		switch k {
		case "type":
		case "properties":
			input.Properties = v
		case "required":
			for _, r := range asSlice(v) {
				if s, ok := r.(string); ok {
					input.Required = append(input.Required, s)
				}
			}
		default:
			input.ExtraFields[k] = v
		}
	}
	tp := &anthropic.ToolParam{Name: name, InputSchema: input}
	if description != "" {
		tp.Description = anthropic.String(description)
	}
	return tp, nil
}

func isJSONObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || t[0] == '{'
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func (p *anthropicProvider) stream(ctx context.Context, params anthropic.MessageNewParams, tool string, onToken func(string), reqOpts []option.RequestOption, guard *streamGuard) (Response, bool, error) {
	s := p.msgs.NewStreaming(ctx, params, append(reqOpts, option.WithMiddleware(guard.middleware))...)
	defer s.Close()
	var (
		msg     anthropic.Message
		emitted bool
		stopped bool
	)
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return Response{}, emitted, &ProtocolError{Provider: p.core.name, Msg: "malformed answer stream", Err: err}
		}
		n := 0
		switch ev.Type {
		case "content_block_delta":
			var tok string
			switch ev.Delta.Type {
			case "text_delta":
				tok = ev.Delta.Text
			case "input_json_delta":
				tok = ev.Delta.PartialJSON
			case "thinking_delta":
				n = len(ev.Delta.Thinking)
			}
			n += len(tok)
			if tok != "" {
				emitted = true
				onToken(tok)
			}
		case "message_stop":
			stopped = true
		}
		if !stopped && guard.event(n) {
			r, err := p.cutOff(&msg, tool, guard)
			return r, emitted, err
		}
	}
	if err := s.Err(); err != nil {
		if guard.cut() {
			r, err := p.cutOff(&msg, tool, guard)
			return r, emitted, err
		}
		return Response{}, emitted, p.sdkError(err)
	}
	if !stopped {
		return Response{}, emitted, p.core.transportError(errors.New("the answer stream ended before message_stop"))
	}
	r, err := p.response(&msg, tool)
	return r, emitted, err
}

// cutOff is the answer so far of a stream past the output cap.
func (p *anthropicProvider) cutOff(msg *anthropic.Message, tool string, guard *streamGuard) (Response, error) {
	msg.StopReason = anthropic.StopReasonMaxTokens
	msg.Usage.OutputTokens = max(msg.Usage.OutputTokens, guard.outputTokens())
	return p.response(msg, tool)
}

// response extracts orch's Response from a complete message.
func (p *anthropicProvider) response(msg *anthropic.Message, tool string) (Response, error) {
	var (
		text     strings.Builder
		thinking []thinkingBlock
		calls    []ToolCall
	)
	toolInput := ""
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "thinking":
			thinking = append(thinking, thinkingBlock{Type: block.Type, Thinking: block.Thinking, Signature: block.Signature})
		case "redacted_thinking":
			thinking = append(thinking, thinkingBlock{Type: block.Type, Data: block.Data})
		case "tool_use":
			if tool != "" && block.Name == tool {
				if toolInput == "" {
					toolInput = string(block.Input)
				}
				continue
			}
			calls = append(calls, ToolCall{ID: block.ID, Name: block.Name, Arguments: modelArguments(string(block.Input))})
		}
	}
	if msg.StopReason == "" {
		return Response{}, &ProtocolError{Provider: p.core.name, Msg: "the answer is not a complete message (no stop_reason)"}
	}
	if msg.StopReason == anthropic.StopReasonRefusal {
		explanation := msg.StopDetails.Explanation
		if explanation == "" {
			explanation = strings.TrimSpace(text.String())
		}
		return Response{}, &RefusalError{Provider: p.core.name, Message: explanation}
	}
	u := msg.Usage
	r := Response{
		Text: text.String(),
		// input_tokens counts only what was neither read from nor
		// written to the cache; orch's InputTokens is the whole prompt.
		Usage: Usage{
			InputTokens:       u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens,
			OutputTokens:      u.OutputTokens,
			CachedInputTokens: u.CacheReadInputTokens,
			CacheWriteTokens:  u.CacheCreationInputTokens,
		},
		Model:      msg.Model,
		StopReason: string(msg.StopReason),
		ToolCalls:  calls,
	}
	if len(thinking) > 0 {
		r.ProviderState, _ = json.Marshal(thinking)
	}
	if toolInput != "" {
		// The structured answer; prose the model wrote beside the tool
		// call is dropped.
		r.Text = toolInput
	}
	return r, nil
}

// sdkError classifies an error of the Anthropic SDK. The SDK's own error
// text quotes the whole response body, so only the message field is kept.
func (p *anthropicProvider) sdkError(err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) {
		var header http.Header
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		status := apiErr.StatusCode
		if status < 400 {
			// An error event inside a stream arrives on a 200 answer;
			// give it the status its type stands for.
			switch apiErr.Type() {
			case "overloaded_error":
				status = 529
			case "rate_limit_error":
				status = http.StatusTooManyRequests
			default:
				status = http.StatusInternalServerError
			}
		}
		return p.core.statusError(status, header, apiErr.Message)
	}
	return p.core.otherError(err)
}
