package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/orchdev/orch/internal/clip"
)

// DefaultJSONAttempts is used by CompleteJSON when maxAttempts is not
// positive.
const DefaultJSONAttempts = 3

// maxFeedback bounds the validation error quoted back to the model.
const maxFeedback = 2000

// CompleteJSON asks p for a structured answer and checks it.
//
// Each answer must be one JSON value (a single surrounding Markdown code
// fence is tolerated), without a key repeated in one object (even in
// another case) or an escaped lone surrogate (see checkJSONText), that
// validate accepts; validate nil means "decodes into T". On invalid JSON or
// a validation error the conversation is sent again with a user message
// quoting the errors (not the rejected answer: re-sending a large answer
// costs its tokens again and teaches nothing the errors do not say), up to
// maxAttempts calls in all. Every Response received is returned, for the
// transcript. An answer cut off at the output limit is a *TruncatedError at
// once, never re-sent as a format mistake: the same request would be cut
// again. Provider errors (a refusal, a rejected key, a timeout) end the
// loop at once and are returned as they are; running out of attempts
// returns an *InvalidResponseError holding the last raw answer.
func CompleteJSON[T any](ctx context.Context, p Provider, req Request, validate func([]byte) (T, error), maxAttempts int) (T, []Response, error) {
	var zero T
	if maxAttempts <= 0 {
		maxAttempts = DefaultJSONAttempts
	}
	if validate == nil {
		validate = decodeInto[T]
	}
	msgs := append([]Message(nil), req.Messages...)
	var (
		responses []Response
		lastErr   error
		lastRaw   string
	)
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		r := req
		r.Messages = msgs
		resp, err := p.Complete(ctx, r)
		if err != nil {
			return zero, responses, err
		}
		responses = append(responses, resp)
		if terr := CheckTruncated(r, resp); terr != nil {
			return zero, responses, terr
		}
		lastRaw = resp.Text
		v, verr := checkJSON(resp.Text, validate)
		if verr == nil {
			return v, responses, nil
		}
		lastErr = verr
		msgs = append(append([]Message(nil), req.Messages...),
			Message{Role: RoleUser, Content: feedback(verr, req.Schema != nil, attempt)})
	}
	return zero, responses, &InvalidResponseError{Raw: lastRaw, Err: lastErr, Attempts: maxAttempts}
}

// CheckAnswer is CompleteJSON's check of one answer text: one JSON value
// (a single surrounding Markdown code fence tolerated), unambiguous, that
// validate accepts. The tool loop uses it for an answer given in text
// instead of through its finish tool.
func CheckAnswer[T any](text string, validate func([]byte) (T, error)) (T, error) {
	return checkJSON(text, validate)
}

// checkJSON extracts the JSON value of an answer and validates it.
func checkJSON[T any](text string, validate func([]byte) (T, error)) (T, error) {
	var zero T
	raw := strings.TrimSpace(stripFence(text))
	if raw == "" {
		return zero, errors.New("the answer is empty")
	}
	if !json.Valid([]byte(raw)) {
		var v any
		err := json.Unmarshal([]byte(raw), &v)
		return zero, fmt.Errorf("the answer is not valid JSON: %v", err)
	}
	if err := checkJSONText([]byte(raw)); err != nil {
		return zero, fmt.Errorf("the answer is ambiguous: %w", err)
	}
	v, err := validate([]byte(raw))
	if err != nil {
		return zero, fmt.Errorf("the answer is not acceptable: %w", err)
	}
	return v, nil
}

// stripFence removes one Markdown code fence around the whole text.
func stripFence(text string) string {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return text
	}
	body := strings.TrimSuffix(t[3:], "```")
	// Drop the info string (```json) up to the first newline.
	if i := strings.IndexByte(body, '\n'); i >= 0 && !strings.ContainsAny(body[:i], "{[\"") {
		body = body[i+1:]
	}
	return body
}

func decodeInto[T any](data []byte) (T, error) {
	var v T
	err := json.Unmarshal(data, &v)
	return v, err
}

// feedback is the user message of a retry: why the previous answer (which
// is not repeated) was rejected, and what to send instead.
func feedback(err error, hasSchema bool, attempt int) string {
	msg := clip.Bytes(err.Error(), maxFeedback)
	what := "one JSON value"
	if hasSchema {
		what = "one JSON value that matches the schema"
	}
	return fmt.Sprintf("Your previous answer (attempt %d) was rejected: %s\nAnswer the request above again, completely, with only %s and no other text.", attempt, msg, what)
}
