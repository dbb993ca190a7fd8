#!/bin/sh
# A protocol 2 command whose model has no tool calling: a request offering
# tools is refused with tools_refused, any other is answered.
req=$(cat)
case $req in
*'"tools":'*) printf '{"tools_refused": "model llama2 has no tool template"}\n' ;;
*) printf '{"text": "plain answer", "usage": {"input_tokens": 3, "output_tokens": 2}}\n' ;;
esac
