#!/bin/sh
# A protocol version 2 command: saves the request to $1 and asks for a
# tool call (arguments as a string, as OpenAI sends them) beside a text.
cat > "$1"
printf '%s\n' '{"text": "Reading first.", "tool_calls": [{"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\": \"calc.go\", \"limit\": 20}"}}, {"type": "function", "function": {"name": "search", "arguments": {"pattern": "Add"}}}], "usage": {"input_tokens": 900, "output_tokens": 30, "cached_input_tokens": 800}, "model": "local-tools"}'
