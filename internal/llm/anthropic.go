package llm

import (
	"context"
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
// A structured answer is asked for with a single tool whose input_schema is
// the request's schema and a tool_choice forcing that tool; the tool's
// input is returned as Response.Text. System messages go to the system
// parameter, in order.
type anthropicProvider struct {
	core  *httpCore
	model string
	msgs  anthropic.MessageService
}

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
	return &anthropicProvider{core: core, model: model, msgs: client.Messages}, nil
}

func (p *anthropicProvider) Name() string { return p.core.name }

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
			return p.stream(ctx, params, tool, req.OnToken, reqOpts)
		})
	}
	// The SDK refuses non-streaming calls it expects to be long unless a
	// request timeout is given; orch's own timeout bounds the call anyway.
	reqOpts = append(reqOpts, option.WithRequestTimeout(p.core.timeout))
	return p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
		msg, err := p.msgs.New(ctx, params, reqOpts...)
		if err != nil {
			return Response{}, false, p.sdkError(err)
		}
		r, err := p.response(msg, tool)
		return r, false, err
	})
}

// params builds the SDK request; tool is the forced tool's name, "" for a
// free-text answer.
func (p *anthropicProvider) params(req Request) (anthropic.MessageNewParams, string, error) {
	var params anthropic.MessageNewParams
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
		case RoleUser:
			params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock(m.Content)))
		case RoleAssistant:
			params.Messages = append(params.Messages, anthropic.NewAssistantMessage(anthropic.NewTextBlock(m.Content)))
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
	if req.Schema == nil {
		return params, "", nil
	}
	schema, err := objectSchema(p.core.name, req.Schema)
	if err != nil {
		return params, "", err
	}
	tool := schemaName(req.SchemaName)
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
	params.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
		Name:        tool,
		Description: anthropic.String(fmt.Sprintf("Record the %s. Call this tool exactly once with the complete answer as its input.", tool)),
		InputSchema: input,
	}}}
	params.ToolChoice = anthropic.ToolChoiceParamOfTool(tool)
	return params, tool, nil
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

func (p *anthropicProvider) stream(ctx context.Context, params anthropic.MessageNewParams, tool string, onToken func(string), reqOpts []option.RequestOption) (Response, bool, error) {
	s := p.msgs.NewStreaming(ctx, params, reqOpts...)
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
		switch ev.Type {
		case "content_block_delta":
			var tok string
			switch ev.Delta.Type {
			case "text_delta":
				tok = ev.Delta.Text
			case "input_json_delta":
				tok = ev.Delta.PartialJSON
			}
			if tok != "" {
				emitted = true
				onToken(tok)
			}
		case "message_stop":
			stopped = true
		}
	}
	if err := s.Err(); err != nil {
		return Response{}, emitted, p.sdkError(err)
	}
	if !stopped {
		return Response{}, emitted, p.core.transportError(errors.New("the answer stream ended before message_stop"))
	}
	r, err := p.response(&msg, tool)
	return r, emitted, err
}

// response extracts orch's Response from a complete message.
func (p *anthropicProvider) response(msg *anthropic.Message, tool string) (Response, error) {
	var text strings.Builder
	toolInput := ""
	for _, block := range msg.Content {
		switch block.Type {
		case "text":
			text.WriteString(block.Text)
		case "tool_use":
			if tool != "" && block.Name == tool && toolInput == "" {
				toolInput = string(block.Input)
			}
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
	r := Response{
		Text:       text.String(),
		Usage:      Usage{InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens},
		Model:      msg.Model,
		StopReason: string(msg.StopReason),
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
