package planner

import (
	"github.com/orchdev/orch/internal/lifecycle"
)

// Planning sub-states, as strings; their definitions are in lifecycle.
const (
	PlanDraft       = string(lifecycle.PlanDraft)
	PlanClarifying  = string(lifecycle.PlanClarifying)
	PlanFormalizing = string(lifecycle.PlanFormalizing)
	PlanReviewReady = string(lifecycle.PlanReviewReady)
	PlanWorkshop    = string(lifecycle.PlanWorkshop)
)
