package sandbox

import (
	"fmt"
	"slices"
	"strings"
)

// Limits are the resource bounds of suites and what enforced them.
// Processes and Memory name the mechanisms; an empty one means the bound
// could not be enforced on this machine.
type Limits struct {
	MaxProcesses int
	MaxMemory    int64
	Processes    []string
	Memory       []string
}

// SameMechanisms reports whether l and o were enforced the same way.
func (l Limits) SameMechanisms(o Limits) bool {
	return slices.Equal(l.Processes, o.Processes) && slices.Equal(l.Memory, o.Memory)
}

// Describe is the report's note about the limits.
func (l Limits) Describe() string {
	procs := fmt.Sprintf("at most %d processes and threads per suite", l.MaxProcesses)
	if len(l.Processes) > 0 {
		procs += " (" + strings.Join(l.Processes, ", ") + ")"
	} else {
		procs += " NOT enforced here (" + processLimitGap + ")"
	}
	mem := "at most " + FormatBytes(l.MaxMemory) + " of memory"
	if len(l.Memory) > 0 {
		mem += " (" + strings.Join(l.Memory, ", ") + ")"
	} else {
		mem += " NOT enforced here" + memoryLimitGap
	}
	return "limits: " + procs + "; " + mem
}
