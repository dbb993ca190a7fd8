#!/bin/sh
# Writes more than the 16 MiB stdout limit.
cat >/dev/null
head -c 17000000 /dev/zero | tr '\0' 'a'
