package llm

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// queueProvider answers with queued texts or errors and records requests.
type queueProvider struct {
	answers []any // string or error
	got     []Request
}

func (q *queueProvider) Name() string { return "queue" }

func (q *queueProvider) Complete(ctx context.Context, req Request) (Response, error) {
	q.got = append(q.got, req)
	if len(q.answers) == 0 {
		return Response{}, errors.New("queue empty")
	}
	a := q.answers[0]
	q.answers = q.answers[1:]
	if err, ok := a.(error); ok {
		return Response{}, err
	}
	if r, ok := a.(Response); ok {
		return r, nil
	}
	return Response{Text: a.(string), Provider: "queue"}, nil
}

func TestCompleteJSON(t *testing.T) {
	valid := `{"title":"T","files":[{"path":"a.go","intent":"create"}],"risk":null}`
	refusal := &RefusalError{Provider: "queue", Message: "no"}
	for _, tc := range []struct {
		name        string
		answers     []any
		max         int
		wantTitle   string
		wantCalls   int
		wantErrType any
		wantRaw     string
	}{
		{"valid first time", []any{valid}, 3, "T", 1, nil, ""},
		{"fenced", []any{"```json\n" + valid + "\n```"}, 3, "T", 1, nil, ""},
		{"bare fence", []any{"```\n" + valid + "\n```"}, 3, "T", 1, nil, ""},
		{"garbage then valid", []any{"I think the plan is fine.", valid}, 3, "T", 2, nil, ""},
		{"invalid then valid", []any{`{"files":[]}`, valid}, 3, "T", 2, nil, ""},
		{"always invalid", []any{"nope", `{"title":""}`, "{"}, 3, "", 3, &InvalidResponseError{}, "{"},
		{"default attempts", []any{"a", "b", "c", valid}, 0, "", 3, &InvalidResponseError{}, "c"},
		{"provider error stops", []any{"bad", refusal, valid}, 3, "", 2, &RefusalError{}, ""},
		{"cut off at the limit is not retried", []any{Response{Text: `{"title":"T"`, StopReason: "length", Provider: "queue"}, valid}, 3, "", 1, &TruncatedError{}, ""},
		{"valid JSON cut off is still cut off", []any{"bad", Response{Text: valid, StopReason: "max_tokens", Provider: "queue"}}, 3, "", 2, &TruncatedError{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &queueProvider{answers: tc.answers}
			req := Request{Role: "planner", Messages: []Message{{Role: RoleUser, Content: "plan"}}, Schema: []byte(`{"type":"object"}`), MaxTokens: 900}
			got, responses, err := CompleteJSON(context.Background(), q, req, validatePlan, tc.max)
			if len(q.got) != tc.wantCalls {
				t.Errorf("%d calls, want %d", len(q.got), tc.wantCalls)
			}
			switch tc.wantErrType.(type) {
			case nil:
				if err != nil {
					t.Fatal(err)
				}
				if got.Title != tc.wantTitle {
					t.Errorf("title %q", got.Title)
				}
				if len(responses) != tc.wantCalls {
					t.Errorf("%d responses, want %d", len(responses), tc.wantCalls)
				}
			case *InvalidResponseError:
				var ire *InvalidResponseError
				if !errors.As(err, &ire) {
					t.Fatalf("error %v (%T), want *InvalidResponseError", err, err)
				}
				if ire.Raw != tc.wantRaw || ire.Attempts != tc.wantCalls {
					t.Errorf("raw %q attempts %d", ire.Raw, ire.Attempts)
				}
			case *RefusalError:
				if !errors.Is(err, refusal) {
					t.Fatalf("error %v, want the provider's refusal", err)
				}
			case *TruncatedError:
				var te *TruncatedError
				if !errors.As(err, &te) || te.Role != "planner" || te.MaxTokens != 900 {
					t.Fatalf("error %v (%T), want a *TruncatedError for planner at 900", err, err)
				}
				if !strings.Contains(err.Error(), "raise max_output_tokens.planner") {
					t.Errorf("message %q does not say what to raise", err)
				}
				if len(responses) != tc.wantCalls {
					t.Errorf("%d responses, want %d", len(responses), tc.wantCalls)
				}
			}
			// A retry carries the request and one message with the
			// errors, not the rejected answer.
			for i, r := range q.got {
				want := 1
				if i > 0 {
					want = 2
				}
				if len(r.Messages) != want {
					t.Errorf("call %d has %d messages, want %d", i+1, len(r.Messages), want)
				}
			}
		})
	}
	// The caller's request is not modified.
	q := &queueProvider{answers: []any{"x", valid}}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "plan"}}}
	if _, _, err := CompleteJSON(context.Background(), q, req, validatePlan, 2); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) != 1 {
		t.Errorf("caller's messages changed: %v", req.Messages)
	}
}

func TestCompleteJSONFeedback(t *testing.T) {
	q := &queueProvider{answers: []any{`{"files":[{"path":"a","intent":"create"}]}`, `{"title":"T","files":[{"path":"a","intent":"create"}],"risk":null}`}}
	req := Request{Messages: []Message{{Role: RoleUser, Content: "plan"}}, Schema: []byte(`{"type":"object"}`)}
	if _, _, err := CompleteJSON(context.Background(), q, req, validatePlan, 2); err != nil {
		t.Fatal(err)
	}
	msgs := q.got[1].Messages
	if len(msgs) != 2 || msgs[0].Content != "plan" {
		t.Fatalf("retry messages %+v", msgs)
	}
	if msgs[1].Role != RoleUser || !strings.Contains(msgs[1].Content, `"title" is missing`) || !strings.Contains(msgs[1].Content, "matches the schema") {
		t.Errorf("feedback %q", msgs[1].Content)
	}
	if strings.Contains(msgs[1].Content, `"intent":"create"`) {
		t.Errorf("the rejected answer was sent back: %q", msgs[1].Content)
	}
}

func TestCompleteJSONDefaultValidator(t *testing.T) {
	q := &queueProvider{answers: []any{`[1,2]`, `{"title":"x"}`}}
	got, _, err := CompleteJSON[planAnswer](context.Background(), q, Request{Messages: []Message{{Role: RoleUser, Content: "p"}}}, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got.Title != "x" || len(q.got) != 2 {
		t.Errorf("got %+v after %d calls", got, len(q.got))
	}
}

func TestStripFence(t *testing.T) {
	for in, want := range map[string]string{
		"```json\n{\"a\":1}\n```": "{\"a\":1}\n",
		"```\n[1]\n```":           "[1]\n",
		"```{\"a\":1}```":         "{\"a\":1}",
		"{\"a\":1}":               "{\"a\":1}",
		"``````":                  "",
		"```":                     "```",
		"text ```json\n{}\n```":   "text ```json\n{}\n```",
	} {
		if got := stripFence(in); got != want {
			t.Errorf("stripFence(%q) = %q, want %q", in, got, want)
		}
	}
}
