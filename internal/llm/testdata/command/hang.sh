#!/bin/sh
# Starts a child, records both pids in $1, then never answers.
sleep 300 &
echo "$$ $!" > "$1.tmp"
mv "$1.tmp" "$1"
wait
