#!/bin/sh
# A command provider speaking protocol version 2 for the tests: request n
# is saved as $1/request-n.json and answered with $1/answer-n.json.
n=$(( $(ls "$1" | grep -c '^request-') + 1 ))
cat > "$1/request-$n.json"
cat "$1/answer-$n.json"
