#!/bin/sh
# Fails with a diagnostic on stderr.
cat >/dev/null
echo "backend unavailable: connection refused to model server" >&2
exit 3
