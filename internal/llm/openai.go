package llm

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/orchdev/orch/internal/clip"
)

// DefaultOpenAIBaseURL is the public OpenAI endpoint.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1/"

// DefaultOpenAIModel is the model used when neither the configuration nor
// the request names one.
const DefaultOpenAIModel = openai.ChatModelGPT5_5

// openaiProvider speaks the chat-completions API through the official SDK.
//
// Structured answers use response_format json_schema. The schema is sent
// with strict true only when it meets OpenAI's strict subset (every object
// closed with additionalProperties false and every property required);
// otherwise strict is false and the answer is checked by CompleteJSON's
// validator instead. Token limits are sent as max_completion_tokens to the
// public OpenAI endpoint and as max_tokens to other servers, which do not
// all know the newer field.
type openaiProvider struct {
	core     *httpCore
	model    string
	official bool
	tools    bool // tool calling is offered (Config.Tools)
	chat     openai.ChatCompletionService
}

func newOpenAI(cfg Config, core *httpCore) (Provider, error) {
	base := cfg.BaseURL
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, &ConfigError{Provider: core.name, Msg: fmt.Sprintf("base URL %q is not an http(s) URL", redact(base, core.key))}
	}
	model := cfg.Model
	if model == "" {
		model = DefaultOpenAIModel
	}
	httpClient := core.opts.httpClient
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithHTTPClient(httpClient),
		option.WithMaxRetries(0),
	}
	if core.key != "" {
		opts = append(opts, option.WithAPIKey(core.key))
	}
	// The service is built directly rather than through openai.NewClient,
	// which would read OPENAI_* variables from the process environment.
	official := u.Host == "api.openai.com"
	// Every OpenAI-compatible server is offered tools unless the
	// configuration says tools = false; one that refuses them answers
	// with an error the agents recognise (*ToolsRefusedError) and fall
	// back from.
	tools := true
	if cfg.Tools != nil {
		tools = *cfg.Tools
	}
	return &openaiProvider{
		core:     core,
		model:    model,
		official: official,
		tools:    tools,
		chat:     openai.NewChatCompletionService(opts...),
	}, nil
}

func (p *openaiProvider) Name() string { return p.core.name }

func (p *openaiProvider) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	// guard is the newest attempt's; its error body tells a refusal of
	// tools where the SDK found no message.
	var guard *streamGuard
	var resp Response
	if req.OnToken != nil {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		resp, err = p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
			guard = newStreamGuard(req.MaxTokens)
			return p.stream(ctx, params, req.OnToken, guard)
		})
	} else {
		resp, err = p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
			guard = newStreamGuard(req.MaxTokens)
			r, err := p.once(ctx, params, guard)
			return r, false, err
		})
	}
	if err != nil && len(req.Tools) > 0 && guard != nil {
		err = classifyToolsRefusal(err, p.core.name, redact(guard.errorBody(), p.core.key))
	}
	return resp, err
}

// SupportsTools reports whether tool calling is offered: unless the
// configuration says tools = false.
func (p *openaiProvider) SupportsTools() bool { return p.tools }

func (p *openaiProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	var params openai.ChatCompletionNewParams
	if len(req.Messages) == 0 {
		return params, &ConfigError{Provider: p.core.name, Msg: "request has no messages"}
	}
	if len(req.Tools) > 0 && !p.tools {
		return params, &ConfigError{Provider: p.core.name, Msg: "the request offers tools but tool calling is off for this provider; set tools = true in its configuration if the server and model speak it"}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			if len(m.ToolCalls) == 0 {
				params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
				continue
			}
			var a openai.ChatCompletionAssistantMessageParam
			if m.Content != "" {
				a.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name: c.Name, Arguments: string(toolParameters(c.Arguments)),
						},
					},
				})
			}
			params.Messages = append(params.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case RoleTool:
			if m.ToolCallID == "" {
				return params, &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("message %d is a tool result without tool_call_id", i)}
			}
			content := m.Content
			if m.IsError && !strings.HasPrefix(content, "Error") {
				// Chat completions have no error flag on a tool result.
				content = "Error: " + content
			}
			params.Messages = append(params.Messages, openai.ToolMessage(content, m.ToolCallID))
		default:
			return params, &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("message %d has unknown role %q", i, m.Role)}
		}
	}
	for _, t := range req.Tools {
		schema, err := objectSchema(p.core.name, toolParameters(t.Parameters))
		if err != nil {
			return params, &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("tool %s: %s", t.Name, err.(*ConfigError).Msg)}
		}
		def := shared.FunctionDefinitionParam{Name: t.Name, Parameters: shared.FunctionParameters(schema)}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	params.Model = shared.ChatModel(p.model)
	if req.Model != "" {
		params.Model = shared.ChatModel(req.Model)
	}
	if req.MaxTokens > 0 {
		if p.official {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	if req.Temperature != nil {
		params.Temperature = openai.Float(*req.Temperature)
	}
	if req.CacheKey != "" {
		params.PromptCacheKey = openai.String(req.CacheKey)
	}
	if req.ReasoningEffort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(req.ReasoningEffort)
	}
	if req.Schema != nil {
		schema, err := objectSchema(p.core.name, req.Schema)
		if err != nil {
			return params, err
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   schemaName(req.SchemaName),
					Schema: schema,
					Strict: openai.Bool(strictCompatible(schema)),
				},
			},
		}
	}
	return params, nil
}

// openaiUsage converts the API's usage; prompt_tokens includes the
// cached part.
func openaiUsage(u openai.CompletionUsage) Usage {
	return Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedInputTokens: u.PromptTokensDetails.CachedTokens}
}

func (p *openaiProvider) once(ctx context.Context, params openai.ChatCompletionNewParams, guard *streamGuard) (Response, error) {
	res, err := p.chat.New(ctx, params, option.WithMiddleware(guard.middleware))
	if err != nil {
		if guard.cut() {
			// An answer body past any answer of the allowed length.
			return Response{Model: string(params.Model), StopReason: "length", Usage: Usage{OutputTokens: guard.outputTokens()}}, nil
		}
		return Response{}, p.sdkError(err)
	}
	if len(res.Choices) == 0 {
		return Response{}, &ProtocolError{Provider: p.core.name, Msg: "the answer has no choices"}
	}
	ch := res.Choices[0]
	if ch.Message.Refusal != "" {
		return Response{}, &RefusalError{Provider: p.core.name, Message: ch.Message.Refusal}
	}
	r := Response{
		Text:       ch.Message.Content,
		Usage:      openaiUsage(res.Usage),
		Model:      res.Model,
		StopReason: ch.FinishReason,
	}
	for i, c := range ch.Message.ToolCalls {
		if c.Type != "" && c.Type != "function" {
			return Response{}, &ProtocolError{Provider: p.core.name, Msg: fmt.Sprintf("the answer's tool call %d is of type %q; only function tools are offered", i, clip.Bytes(c.Type, 40))}
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: modelArguments(c.Function.Arguments)})
	}
	return r, nil
}

// streamedCall accumulates one tool call's deltas.
type streamedCall struct {
	id, name string
	args     strings.Builder
}

func (p *openaiProvider) stream(ctx context.Context, params openai.ChatCompletionNewParams, onToken func(string), guard *streamGuard) (Response, bool, error) {
	s := p.chat.NewStreaming(ctx, params, option.WithMiddleware(guard.middleware))
	defer s.Close()
	var (
		text, refusal strings.Builder
		resp          Response
		emitted       bool
		chunks        int
		calls         = map[int64]*streamedCall{}
		order         []int64
	)
	for s.Next() {
		chunk := s.Current()
		chunks++
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			resp.Usage = openaiUsage(chunk.Usage)
		}
		if len(chunk.Choices) == 0 {
			if guard.event(0) {
				return p.cut(resp, &text, calls, order, guard), emitted, nil
			}
			continue
		}
		ch := chunk.Choices[0]
		n := len(ch.Delta.Content) + len(ch.Delta.Refusal)
		if ch.Delta.Content != "" {
			text.WriteString(ch.Delta.Content)
			emitted = true
			onToken(ch.Delta.Content)
		}
		refusal.WriteString(ch.Delta.Refusal)
		for _, d := range ch.Delta.ToolCalls {
			c, ok := calls[d.Index]
			if !ok {
				if len(calls) >= maxToolCalls {
					return Response{}, emitted, &ProtocolError{Provider: p.core.name, Msg: fmt.Sprintf("the answer has more than %d tool calls", maxToolCalls)}
				}
				c = &streamedCall{}
				calls[d.Index] = c
				order = append(order, d.Index)
			}
			if d.ID != "" {
				c.id = d.ID
			}
			c.name += d.Function.Name
			c.args.WriteString(d.Function.Arguments)
			n += len(d.Function.Name) + len(d.Function.Arguments)
		}
		if ch.FinishReason != "" {
			resp.StopReason = ch.FinishReason
		}
		if guard.event(n) {
			return p.cut(resp, &text, calls, order, guard), emitted, nil
		}
	}
	if err := s.Err(); err != nil {
		if guard.cut() {
			return p.cut(resp, &text, calls, order, guard), emitted, nil
		}
		return Response{}, emitted, p.sdkError(err)
	}
	if refusal.Len() > 0 {
		return Response{}, emitted, &RefusalError{Provider: p.core.name, Message: refusal.String()}
	}
	if chunks == 0 || resp.StopReason == "" {
		return Response{}, emitted, p.core.transportError(errors.New("the answer stream ended before the model finished"))
	}
	resp.Text = text.String()
	resp.ToolCalls = collectCalls(calls, order)
	return resp, emitted, nil
}

// cut ends a stream that passed the output cap: the answer so far,
// reported as cut off at the output limit.
func (p *openaiProvider) cut(resp Response, text *strings.Builder, calls map[int64]*streamedCall, order []int64, guard *streamGuard) Response {
	resp.Text = text.String()
	resp.ToolCalls = collectCalls(calls, order)
	resp.StopReason = "length"
	resp.Usage.OutputTokens = max(resp.Usage.OutputTokens, guard.outputTokens())
	return resp
}

// collectCalls returns the accumulated tool calls in the order they
// started; a call without id gets one from its position.
func collectCalls(calls map[int64]*streamedCall, order []int64) []ToolCall {
	var out []ToolCall
	for k, idx := range order {
		c := calls[idx]
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", k)
		}
		out = append(out, ToolCall{ID: id, Name: c.name, Arguments: modelArguments(c.args.String())})
	}
	return out
}

// sdkError classifies an error of the OpenAI SDK.
func (p *openaiProvider) sdkError(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		var header map[string][]string
		if apiErr.Response != nil {
			header = apiErr.Response.Header
		}
		return p.core.statusError(apiErr.StatusCode, header, apiErr.Message)
	}
	return p.core.otherError(err)
}
