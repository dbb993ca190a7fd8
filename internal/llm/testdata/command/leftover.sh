#!/bin/sh
# Answers, but leaves a background child running; records its pid in $1.
cat >/dev/null
sleep 300 </dev/null >/dev/null 2>&1 &
echo "$!" > "$1"
printf '%s\n' '{"text": "done"}'
