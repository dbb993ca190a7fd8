#!/bin/sh
# Answers with a structured answer given as a JSON value.
cat >/dev/null
printf '%s\n' '{"json": {"ok": true, "issues": []}}'
