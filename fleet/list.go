package fleet

import (
	"context"
	"fmt"
	"slices"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/orchdev/orch/internal/fleetlink"
	"github.com/orchdev/orch/internal/lifecycle"
)

// Listing is what `orch fleet` shows: the running tasks by phase, and the
// workers polling each queue. It is orch-fleet list --json's answer, so
// its type is the one orch reads it with (internal/fleetlink).
type Listing = fleetlink.Listing

// TaskLine is one task of the listing.
type TaskLine = fleetlink.TaskLine

// List lists the fleet's running tasks by phase and its workers by queue.
func List(ctx context.Context, c client.Client) (Listing, error) {
	l := Listing{Phases: map[lifecycle.Phase][]TaskLine{}, Workers: map[string][]string{}}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", WorkflowName),
			NextPageToken: token,
		})
		if err != nil {
			return l, fmt.Errorf("list the fleet's tasks: %w", err)
		}
		for _, e := range resp.Executions {
			id := strings.TrimPrefix(e.GetExecution().GetWorkflowId(), "orch-task-")
			v, err := History(ctx, c, id)
			if err != nil {
				return l, err
			}
			l.Phases[v.Phase] = append(l.Phases[v.Phase], TaskLine{Task: id, Revision: v.Revision, Waiting: v.Waiting})
		}
		if token = resp.NextPageToken; len(token) == 0 {
			break
		}
	}
	for p := range l.Phases {
		slices.SortFunc(l.Phases[p], func(a, b TaskLine) int { return strings.Compare(a.Task, b.Task) })
	}
	for _, q := range []string{QueueModel, QueueTest, QueueLand} {
		d, err := c.DescribeTaskQueue(ctx, q, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err != nil {
			return l, fmt.Errorf("describe queue %s: %w", q, err)
		}
		var ids []string
		for _, p := range d.GetPollers() {
			ids = append(ids, p.GetIdentity())
		}
		slices.Sort(ids)
		l.Workers[q] = ids
	}
	return l, nil
}
