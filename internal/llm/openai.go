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
	return &openaiProvider{
		core:     core,
		model:    model,
		official: u.Host == "api.openai.com",
		chat:     openai.NewChatCompletionService(opts...),
	}, nil
}

func (p *openaiProvider) Name() string { return p.core.name }

func (p *openaiProvider) Complete(ctx context.Context, req Request) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	if req.OnToken != nil {
		params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
		return p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
			return p.stream(ctx, params, req.OnToken)
		})
	}
	return p.core.run(ctx, func(ctx context.Context) (Response, bool, error) {
		r, err := p.once(ctx, params)
		return r, false, err
	})
}

func (p *openaiProvider) params(req Request) (openai.ChatCompletionNewParams, error) {
	var params openai.ChatCompletionNewParams
	if len(req.Messages) == 0 {
		return params, &ConfigError{Provider: p.core.name, Msg: "request has no messages"}
	}
	for i, m := range req.Messages {
		switch m.Role {
		case RoleSystem:
			params.Messages = append(params.Messages, openai.SystemMessage(m.Content))
		case RoleUser:
			params.Messages = append(params.Messages, openai.UserMessage(m.Content))
		case RoleAssistant:
			params.Messages = append(params.Messages, openai.AssistantMessage(m.Content))
		default:
			return params, &ConfigError{Provider: p.core.name, Msg: fmt.Sprintf("message %d has unknown role %q", i, m.Role)}
		}
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

func (p *openaiProvider) once(ctx context.Context, params openai.ChatCompletionNewParams) (Response, error) {
	res, err := p.chat.New(ctx, params)
	if err != nil {
		return Response{}, p.sdkError(err)
	}
	if len(res.Choices) == 0 {
		return Response{}, &ProtocolError{Provider: p.core.name, Msg: "the answer has no choices"}
	}
	ch := res.Choices[0]
	if ch.Message.Refusal != "" {
		return Response{}, &RefusalError{Provider: p.core.name, Message: ch.Message.Refusal}
	}
	return Response{
		Text:       ch.Message.Content,
		Usage:      Usage{InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens},
		Model:      res.Model,
		StopReason: ch.FinishReason,
	}, nil
}

func (p *openaiProvider) stream(ctx context.Context, params openai.ChatCompletionNewParams, onToken func(string)) (Response, bool, error) {
	s := p.chat.NewStreaming(ctx, params)
	defer s.Close()
	var (
		text, refusal strings.Builder
		resp          Response
		emitted       bool
		chunks        int
	)
	for s.Next() {
		chunk := s.Current()
		chunks++
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.JSON.Usage.Valid() {
			resp.Usage = Usage{InputTokens: chunk.Usage.PromptTokens, OutputTokens: chunk.Usage.CompletionTokens}
		}
		if len(chunk.Choices) == 0 {
			continue
		}
		ch := chunk.Choices[0]
		if ch.Delta.Content != "" {
			text.WriteString(ch.Delta.Content)
			emitted = true
			onToken(ch.Delta.Content)
		}
		refusal.WriteString(ch.Delta.Refusal)
		if ch.FinishReason != "" {
			resp.StopReason = ch.FinishReason
		}
	}
	if err := s.Err(); err != nil {
		return Response{}, emitted, p.sdkError(err)
	}
	if refusal.Len() > 0 {
		return Response{}, emitted, &RefusalError{Provider: p.core.name, Message: refusal.String()}
	}
	if chunks == 0 || resp.StopReason == "" {
		return Response{}, emitted, p.core.transportError(errors.New("the answer stream ended before the model finished"))
	}
	resp.Text = text.String()
	return resp, emitted, nil
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
