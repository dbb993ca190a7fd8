#!/bin/sh
cat >/dev/null
printf '%s\n' '{"refusal": "policy forbids this"}'
