#!/bin/sh
# A well-behaved command provider: saves the request it got to $1 and
# answers with text, usage and model.
cat > "$1"
printf '%s\n' '{"text": "Plan looks sound.", "usage": {"input_tokens": 120, "output_tokens": 7}, "model": "local-test-model", "stop_reason": "stop", "extra": "ignored"}'
