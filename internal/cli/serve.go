package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/board"
	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/fleetlink"
)

func newServeCmd(env *Env) *cobra.Command {
	var addr string
	var open, allowRemote, poll bool
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7777] [--open]",
		Short: "a local web board: the tasks by phase, live, and each task's evidence and actions",
		Long: `Serve this repository's .orch/ as a web board: the tasks in columns by phase
(live: a change from the CLI, the REPL or another browser shows within a
second), and a page per task with the lifecycle diagram, the timeline, the
plan, the questions, the plan and code reviews, the diff, the test report,
the evidence hashes and earlier attempts. Its buttons run exactly what the
CLI commands run (answer, next, override, redo, accept, revert, a phase's
worker), under the same lock, with the same checks and transcript events;
a refusal is shown with the exit code the CLI would give. With [fleet]
configured, the fleet's tasks are on the board too, read and acted on
through orch-fleet (docs/board.md, "The board and the fleet").

The board listens on loopback and prints its URL with a random token; the
browser keeps the token in a cookie. Requests without it, with a foreign
Host header, or a form without its CSRF token are refused. A non-loopback
--addr needs --allow-remote: anyone who can reach the address and has the
token can then read every task and accept changes into this repository,
over plain HTTP.

Ctrl-C stops the board (and cancels a phase run it started).`,
		Example: `  orch serve
  orch serve --open
  orch serve --addr 127.0.0.1:0            # any free port
  orch serve --addr 0.0.0.0:7777 --allow-remote`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				return exit.New(exit.ErrUsage, "--addr %q: expected host:port, such as 127.0.0.1:7777 (%v)", addr, err)
			}
			if !board.Loopback(addr) && !allowRemote {
				return exit.New(exit.ErrUsage, "--addr %s is not a loopback address: the board would be reachable from other machines, and with the URL's token anyone there could read every task and accept changes into this repository over plain HTTP; pass --allow-remote to do that on purpose, or use 127.0.0.1", addr)
			}
			p, err := env.project()
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: listen on %s: %w", addr, err)
			}
			// The address as bound (a port 0 becomes the real one), with
			// the host as given.
			_, port, _ := net.SplitHostPort(ln.Addr().String())
			bound := net.JoinHostPort(host, port)
			opt := board.Options{Project: p, Addr: bound, Decider: deciderName(env, ""), Getenv: env.Getenv,
				Environ: env.environ(), LLMOptions: env.LLMOptions, Now: env.Now, Poll: poll}
			// With [fleet], the fleet's tasks are on the board too, read
			// and acted on through orch-fleet (docs/board.md).
			if cfg, err := config.Load(p.Dir); err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s\n(the fleet's tasks, if any, are not shown)\n", exit.Format(err))
			} else if cfg.Fleet.Configured() {
				opt.Fleet, opt.FleetErr = fleetlink.Open(p.Root, cfg.Fleet)
				if opt.Fleet != nil {
					opt.Fleet.Env = env.environ()
				}
			}
			b, err := board.New(opt)
			if err != nil {
				ln.Close()
				return err
			}
			b.Start()
			srv := &http.Server{Handler: b.Handler(), ReadHeaderTimeout: 10 * time.Second}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "orch serve: the board of %s\n  %s\n", p.Root, b.URL())
			switch {
			case opt.Fleet != nil:
				fmt.Fprintf(out, "  with the fleet's tasks (%s through %s)\n", opt.Fleet.Fleet.Address, opt.Fleet.Binary)
			case opt.FleetErr != nil:
				fmt.Fprintf(cmd.ErrOrStderr(), "%s\n(the board shows the local tasks; the fleet's cannot be asked)\n", exit.Format(opt.FleetErr))
			}
			if !board.Loopback(bound) {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: listening on %s, not loopback: anyone who can reach it and has the token can read every task's plan, diff, logs and transcript, answer, override, accept (commit) and revert; the traffic is plain HTTP\n", bound)
			}
			fmt.Fprintln(out, "Ctrl-C stops it.")
			if open {
				if err := openBrowser(env.Getenv, b.URL()); err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "orch: could not open a browser (%v): open the URL above\n", err)
				}
			}
			errc := make(chan error, 1)
			go func() { errc <- srv.Serve(ln) }()
			select {
			case err := <-errc:
				b.Close()
				if !errors.Is(err, http.ErrServerClosed) {
					return fmt.Errorf("serve: %w", err)
				}
				return nil
			case <-cmd.Context().Done():
			}
			// The board's streams end first, then the server.
			b.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(ctx)
			fmt.Fprintln(out, "orch serve: stopped")
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:7777", "address to listen on (host:port; port 0 picks a free one)")
	cmd.Flags().BoolVar(&open, "open", false, "open the board in a browser")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "allow a non-loopback --addr (the board is then reachable from the network)")
	cmd.Flags().BoolVar(&poll, "poll", false, "notice changes by polling instead of file-system notifications")
	return cmd
}

// openBrowser opens url in the browser that $BROWSER names, as Python's
// webbrowser and xdg-open read it: commands separated by ':', tried in
// turn, "%s" standing for the URL (else the URL is the last argument).
// Without $BROWSER the desktop's opener is asked.
func openBrowser(getenv func(string) string, url string) error {
	var cmds [][]string
	for entry := range strings.SplitSeq(getenv("BROWSER"), ":") {
		args := strings.Fields(entry)
		if len(args) == 0 {
			continue
		}
		if !slices.ContainsFunc(args, func(a string) bool { return strings.Contains(a, "%s") }) {
			args = append(args, url)
		}
		for i, a := range args {
			args[i] = strings.ReplaceAll(a, "%s", url)
		}
		cmds = append(cmds, args)
	}
	if len(cmds) == 0 {
		switch runtime.GOOS {
		case "darwin":
			cmds = [][]string{{"open", url}}
		case "windows":
			cmds = [][]string{{"rundll32", "url.dll,FileProtocolHandler", url}}
		default:
			cmds = [][]string{{"xdg-open", url}}
		}
	}
	var errs []error
	for _, args := range cmds {
		c := exec.Command(args[0], args[1:]...)
		if err := c.Start(); err != nil {
			errs = append(errs, err)
			continue
		}
		go c.Wait()
		return nil
	}
	return errors.Join(errs...)
}
