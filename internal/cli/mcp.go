package cli

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/exit"
	"github.com/orchdev/orch/internal/mcpserver"
)

func newMCPCmd(env *Env) *cobra.Command {
	var httpAddr, dir string
	var allowRemote bool
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "serve the lifecycle to agent hosts (Claude Code, Codex, VS Code) over the Model Context Protocol",
		Long: `Serve this project as a Model Context Protocol server: over standard input and
output (what agent hosts start), or with --http ADDR over the streamable HTTP
transport at http://ADDR/mcp.

The host's agent gets tools to read tasks, write the plan (checked by the same
strict decoders as orch next), answer questions, run the phases' workers and
take transitions; the human gates (accept, revert, override, redo) are offered
only when .orch/config.toml's [mcp] allow names them. Every action is logged
in the task's transcript as an mcp_call event naming the client. Each task's
artifacts are resources orch://task/<id>/<path>, with change notifications.
Tool names and schemas: docs/mcp.md.

--http listens on a loopback address only, unless --allow-remote; every request
needs "Authorization: Bearer TOKEN": the token is $ORCH_MCP_TOKEN (at least 16
characters) or a random one printed on standard error at start.`,
		Example: `  claude mcp add orch -- orch mcp
  orch mcp --dir ~/src/myproject
  orch mcp --http 127.0.0.1:8765`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir != "" {
				abs, err := filepath.Abs(dir)
				if err != nil {
					return exit.New(exit.ErrUsage, "--dir %q: %v", dir, err)
				}
				env.Dir = abs
			}
			if _, err := env.project(); err != nil {
				return err
			}
			opt := mcpserver.Options{Dir: env.Dir, Getenv: env.Getenv, Environ: env.Environ, Now: env.Now,
				LLMOptions: env.LLMOptions, Version: readBuildInfo().Version, Log: cmd.ErrOrStderr(), Hooks: env.Hooks}
			if httpAddr == "" {
				opt.Transport = "stdio"
				srv, err := mcpserver.New(opt)
				if err != nil {
					return err
				}
				return srv.Run(cmd.Context(), mcpserver.Stdio(env.Stdin, unwrap(cmd.OutOrStdout())))
			}
			if err := mcpserver.CheckAddr(httpAddr, allowRemote); err != nil {
				return err
			}
			token := env.Getenv("ORCH_MCP_TOKEN")
			if token != "" && len(token) < mcpserver.MinTokenBytes {
				return exit.New(exit.ErrUsage, "ORCH_MCP_TOKEN is %d characters; use at least %d (or unset it for a random token)", len(token), mcpserver.MinTokenBytes)
			}
			printed := token == ""
			if printed {
				var err error
				if token, err = mcpserver.NewToken(); err != nil {
					return err
				}
			}
			opt.Transport = "http"
			srv, err := mcpserver.New(opt)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", httpAddr)
			if err != nil {
				return exit.New(exit.ErrUsage, "--http %s: %v", httpAddr, err)
			}
			errw := cmd.ErrOrStderr()
			fmt.Fprintf(errw, "orch mcp: streamable HTTP at http://%s%s\n", ln.Addr(), mcpserver.HTTPPath)
			if printed {
				fmt.Fprintf(errw, "token: %s\n", token)
			}
			fmt.Fprintln(errw, "send it as the header  Authorization: Bearer <token>; stop with Ctrl-C")
			return srv.ServeHTTP(cmd.Context(), ln, token)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve the streamable HTTP transport at ADDR (127.0.0.1:8765) instead of stdio")
	cmd.Flags().StringVar(&dir, "dir", "", "the project (default: the working directory); for hosts that start servers elsewhere")
	cmd.Flags().BoolVar(&allowRemote, "allow-remote", false, "let --http listen on a non-loopback address")
	return cmd
}
