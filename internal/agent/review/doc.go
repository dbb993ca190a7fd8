// Package review holds the one reviewer engine (a panel of personas that
// judge the same material concurrently, each in its own model run) and its
// two uses: plan review (Plan) and code review (Code). Aggregate verdicts
// are computed here, in code, from the personas' answers.
package review
