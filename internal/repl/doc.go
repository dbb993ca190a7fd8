// Package repl is orch's interactive session: a line editor and a
// dispatcher over the same command tree as the command line. Each line is
// either a slash command (/plan, /review code, /next --override "R" …),
// translated into an orch command line and run through a RunFunc the caller
// supplies (a fresh cobra root per line, so the REPL and the CLI cannot
// drift), a built-in (/diff, /task switch, /help, /quit), or plain text: the
// answer to the current task's first open planning question, or the brief
// of a new task when there is none.
//
// In a terminal the session edits lines with github.com/chzyer/readline
// (history in .orch/repl_history, tab completion of commands, phases, task
// and question ids), shows the task and phase in the prompt, a spinner while
// a command runs, and renders plans and reviews as Markdown. An interrupt
// cancels the running command's context, never the session. Without a
// terminal it reads one command per line from its input and prints plain
// text: no prompt, no spinner, no escape codes.
package repl
