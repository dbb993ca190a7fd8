package fleet

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/orchdev/orch/internal/exit"
)

// Conn is how to reach the Temporal service ([fleet] in the
// configuration, docs/fleet.md).
type Conn struct {
	// Address is the frontend's host:port; Namespace the namespace
	// ("default" when empty).
	Address   string
	Namespace string
	// TLS turns TLS on; CAFile, CertFile and KeyFile are optional PEM
	// files (a private CA, mutual TLS). ServerName overrides the name
	// checked in the server's certificate.
	TLS                       bool
	CAFile, CertFile, KeyFile string
	ServerName                string
	// APIKey is the API key (Temporal Cloud), read from the environment
	// variable the configuration names; never written to a file.
	APIKey string
	// Identity names this process in the service's history.
	Identity string
}

// Dial connects to the Temporal service.
func Dial(ctx context.Context, c Conn) (client.Client, error) {
	opt := client.Options{HostPort: c.Address, Namespace: c.Namespace, Identity: c.Identity, Logger: quietLogger{}}
	if opt.Namespace == "" {
		opt.Namespace = "default"
	}
	if c.TLS || c.APIKey != "" {
		cfg := &tls.Config{ServerName: c.ServerName, MinVersion: tls.VersionTLS12}
		if c.CAFile != "" {
			pem, err := os.ReadFile(c.CAFile)
			if err != nil {
				return nil, fmt.Errorf("[fleet] ca_file: %w", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("[fleet] ca_file %s: no PEM certificate in it", c.CAFile)
			}
			cfg.RootCAs = pool
		}
		if c.CertFile != "" || c.KeyFile != "" {
			cert, err := tls.LoadX509KeyPair(c.CertFile, c.KeyFile)
			if err != nil {
				return nil, fmt.Errorf("[fleet] cert_file/key_file: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		opt.ConnectionOptions.TLS = cfg
	}
	if c.APIKey != "" {
		opt.Credentials = client.NewAPIKeyStaticCredentials(c.APIKey)
	}
	cl, err := client.DialContext(ctx, opt)
	if err != nil {
		return nil, fmt.Errorf("cannot reach the fleet's Temporal service at %s (namespace %s): %w", c.Address, opt.Namespace, err)
	}
	return cl, nil
}

// Capacity bounds a worker's concurrent work.
type Capacity struct {
	// Models bounds concurrent steps on the model queue (the model-backed
	// phases and the short steps), Tests concurrent test runs. Land makes
	// the worker take accept and revert (it holds the repository's
	// branch).
	Models, Tests int
	Land          bool
}

// HeartbeatEvery bounds the time between two heartbeats of a running
// step that reach the server. Temporal's SDK otherwise sends one every
// 80 % of the heartbeat timeout, which leaves a fifth of it for the trip:
// on a loaded machine a live worker's steps were taken for dead (the
// end-to-end test with 20 tasks and a 4 s timeout had codegen steps
// retried until their attempts ran out).
const HeartbeatEvery = 2 * time.Second

// Serve runs the fleet's workers on connection c for the clone of steps
// until ctx ends.
func Serve(ctx context.Context, c client.Client, steps *Steps, capa Capacity) error {
	if capa.Models <= 0 {
		capa.Models = 4
	}
	if capa.Tests <= 0 {
		capa.Tests = 1
	}
	queues := []struct {
		name string
		n    int
	}{{QueueModel, capa.Models}, {QueueTest, capa.Tests}}
	if capa.Land {
		queues = append(queues, struct {
			name string
			n    int
		}{QueueLand, 1})
	}
	var started []worker.Worker
	defer func() {
		for _, w := range started {
			w.Stop()
		}
	}()
	for _, q := range queues {
		w := worker.New(c, q.name, worker.Options{MaxConcurrentActivityExecutionSize: q.n, Identity: steps.Identity, MaxHeartbeatThrottleInterval: HeartbeatEvery})
		if q.name == QueueModel {
			w.RegisterWorkflowWithOptions(TaskWorkflow, workflow.RegisterOptions{Name: WorkflowName})
		}
		w.RegisterActivityWithOptions(steps.Step, activity.RegisterOptions{Name: ActivityName})
		if err := w.Start(); err != nil {
			return fmt.Errorf("start the worker of queue %s: %w", q.name, err)
		}
		started = append(started, w)
	}
	<-ctx.Done()
	return nil
}

// Submit hands task id of the clone at root to the fleet: its folder is
// pushed to the shared remote as the first commit of its ref, and its
// workflow is started. A task already submitted is refused.
func Submit(ctx context.Context, c client.Client, root, remote, id string, p Params) (string, error) {
	// Re-submitting builds the same commit (same tree, message and
	// second), so the push below would succeed as a no-op: the ref's
	// presence on the remote is the refusal.
	have, err := git(ctx, root, nil, "ls-remote", "--refs", remote, TaskRef(id))
	if err != nil {
		return "", fmt.Errorf("task %s: look for its ref on %s: %w", id, remote, err)
	}
	if have != "" {
		return "", exit.New(exit.ErrRefused, "task %s is already in the fleet: its ref %s exists on %s", id, TaskRef(id), remote)
	}
	msg := fmt.Sprintf("orch fleet: submit %s\n\nOrch-Fleet-Task: %s\n", id, id)
	commit, err := CommitFolder(ctx, root, id, "", msg)
	if err != nil {
		return "", err
	}
	if _, err := git(ctx, root, nil, "push", "--quiet", remote, commit+":"+TaskRef(id)); err != nil {
		return "", pushRefused(ctx, root, remote, id, err)
	}
	if _, err := git(ctx, root, nil, "update-ref", LocalRef(id), commit); err != nil {
		return "", err
	}
	p.Task, p.Head = id, commit
	_, err = c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: WorkflowID(id), TaskQueue: QueueModel, WorkflowExecutionErrorWhenAlreadyStarted: true}, WorkflowName, p)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return "", exit.New(exit.ErrRefused, "task %s is already in the fleet: its workflow %s is running", id, WorkflowID(id))
	}
	if err != nil {
		return "", fmt.Errorf("start task %s's workflow: %w", id, err)
	}
	return commit, nil
}

// pushRefused is Submit's error when the push of task id's first commit
// failed (pushErr) after ls-remote found no ref: the remote is looked at
// again, and only a ref that is there now (another submission got in
// between) is the refusal "already in the fleet"; otherwise the push
// failed for its own reason (the remote unreachable, a hook or a
// permission that declined it), which is said with git's words, and no
// workflow was started.
func pushRefused(ctx context.Context, root, remote, id string, pushErr error) error {
	have, err := git(ctx, root, nil, "ls-remote", "--refs", remote, TaskRef(id))
	if err == nil && have != "" {
		return exit.New(exit.ErrRefused, "task %s is already in the fleet: its ref %s was pushed to %s by another submission while this one ran", id, TaskRef(id), remote)
	}
	return fmt.Errorf("task %s was not submitted: pushing its folder to %s as %s failed (no workflow was started; submit again once the push can succeed): %w", id, remote, TaskRef(id), pushErr)
}

// Status returns what `orch status --json` prints for task id, from its
// workflow.
func Status(ctx context.Context, c client.Client, id string) (json.RawMessage, error) {
	var out json.RawMessage
	err := query(ctx, c, id, QueryStatus, &out)
	return out, err
}

// Log returns the events `orch log --json` prints for task id, from its
// workflow.
func Log(ctx context.Context, c client.Client, id string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := query(ctx, c, id, QueryLog, &out)
	return out, err
}

// History returns task id's workflow's steps.
func History(ctx context.Context, c client.Client, id string) (FlowView, error) {
	var out FlowView
	err := query(ctx, c, id, QueryHistory, &out)
	return out, err
}

func query(ctx context.Context, c client.Client, id, name string, out any) error {
	v, err := c.QueryWorkflow(ctx, WorkflowID(id), "", name)
	if err != nil {
		return fmt.Errorf("query task %s in the fleet: %w", id, err)
	}
	return v.Get(out)
}

// Gate sends a gate's Update (UpdateAnswer, UpdateAccept, …) with its
// request to task id's workflow and waits for its step. A refusal is
// orch's own (an *exit.Error: message, hints and exit code).
func Gate(ctx context.Context, c client.Client, id, name string, req any) (GateResult, error) {
	var res GateResult
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: WorkflowID(id), UpdateName: name, Args: []any{req},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return res, FromTemporal(err)
	}
	if err := h.Get(ctx, &res); err != nil {
		return res, FromTemporal(err)
	}
	return res, nil
}

// quietLogger drops the SDK's log lines (orch prints its own).
type quietLogger struct{}

func (quietLogger) Debug(string, ...any) {}
func (quietLogger) Info(string, ...any)  {}
func (quietLogger) Warn(string, ...any)  {}
func (quietLogger) Error(string, ...any) {}
