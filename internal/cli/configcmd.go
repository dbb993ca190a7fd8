package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"

	"github.com/orchdev/orch/internal/config"
	"github.com/orchdev/orch/internal/exit"
)

func newConfigCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "config [KEY]",
		Short: "print the configuration in effect: .orch/config.toml over orch's defaults",
		Long: `Print the configuration orch uses: the keys of .orch/config.toml over orch's
defaults, as TOML. With a KEY (dotted: test.timeout, review.plan_personas,
providers.default.model) only that value: a plain value on one line, a table
as TOML. Read only: edit .orch/config.toml to change it. An unknown key is a
usage error naming the keys its table knows; a key of orch's that has no
value prints nothing. Tab completes the keys.`,
		Example: `  orch config
  orch config review.plan_personas
  orch config test --json`,
		Args: cobra.MaximumNArgs(1),
		ValidArgsFunction: func(_ *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			var out []string
			for _, k := range env.configKeys() {
				if strings.HasPrefix(k, toComplete) {
					out = append(out, k)
				}
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			tree, err := env.effectiveConfig()
			if err != nil {
				return err
			}
			var v any = tree
			out := cmd.OutOrStdout()
			if len(args) == 1 {
				var ok bool
				if v, ok = lookupKey(tree, args[0]); !ok {
					if slices.Contains(config.Keys(), args[0]) {
						return nil // a key of orch's with no value: unset
					}
					return exit.New(exit.ErrUsage, "config: %s: %s", args[0], config.UnknownKey(args[0]))
				}
			}
			if s, ok := v.(string); ok && !asJSON {
				fmt.Fprintln(out, s)
				return nil
			}
			if asJSON {
				return json.NewEncoder(out).Encode(v)
			}
			if m, ok := v.(map[string]any); ok {
				return toml.NewEncoder(out).Encode(m)
			}
			var b bytes.Buffer
			if err := toml.NewEncoder(&b).Encode(map[string]any{"v": v}); err != nil {
				return err
			}
			fmt.Fprintln(out, strings.TrimSpace(strings.TrimPrefix(b.String(), "v = ")))
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the value as JSON")
	return cmd
}

// effectiveConfig is the project's configuration in effect as a tree of
// TOML values.
func (env *Env) effectiveConfig() (map[string]any, error) {
	p, err := env.project()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(p.Dir)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(cfg); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	tree := map[string]any{}
	if _, err := toml.Decode(b.String(), &tree); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return tree, nil
}

// lookupKey finds the dotted key in tree.
func lookupKey(tree map[string]any, dotted string) (any, bool) {
	var v any = tree
	for _, part := range strings.Split(dotted, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[part]; !ok {
			return nil, false
		}
	}
	return v, true
}

// configKeys are the keys to complete: the configuration's fixed keys and
// every key of the configuration in effect (providers.NAME.type, …).
func (env *Env) configKeys() []string {
	seen := map[string]bool{}
	for _, k := range config.Keys() {
		seen[k] = true
	}
	if tree, err := env.effectiveConfig(); err == nil {
		var walk func(prefix string, m map[string]any)
		walk = func(prefix string, m map[string]any) {
			for k, v := range m {
				seen[prefix+k] = true
				if sub, ok := v.(map[string]any); ok {
					walk(prefix+k+".", sub)
				}
			}
		}
		walk("", tree)
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
