package main

import (
	"bytes"
	"context"
	"fmt"
	neturl "net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// cmdInstall wires askd into an agent: `askd install claude` writes Claude
// Code's config files, `askd install codex` edits Codex's config.toml.
func cmdInstall(ctx context.Context, e *env, args []string) error {
	if len(args) == 0 {
		return usageError("install: say which agent: askd install claude [--scope project|user] | askd install codex")
	}
	switch args[0] {
	case "claude":
		return installClaude(e, args[1:])
	case "codex":
		return installCodex(e, args[1:])
	}
	return usageError(fmt.Sprintf("install: %q is not claude or codex", args[0]))
}

func report(e *env, path string, changed bool) {
	if changed {
		fmt.Fprintf(e.stdout, "wrote     %s\n", path)
	} else {
		fmt.Fprintf(e.stdout, "unchanged %s\n", path)
	}
}

// homeDir is $HOME as the command's environment has it, else the OS's idea.
func homeDir(e *env) (string, error) {
	if home := e.getenv("HOME"); home != "" {
		return home, nil
	}
	return os.UserHomeDir()
}

func writeIfChanged(path string, data []byte) (bool, error) {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false, err
	}
	return true, os.WriteFile(path, data, 0o644)
}

// shortDuration is d as askd's flags take it, without zero tails: 5m, not 5m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// seconds rounds d up to whole seconds, the unit of Codex's timeouts.
func seconds(d time.Duration) int {
	return int((d + time.Second - 1) / time.Second)
}

// checkHookURL refuses a server URL that askd's hooks cannot carry as it
// is: it goes into a double-quoted shell word (for Claude Code the default of
// ${ASKD_URL:-...}) inside a JSON or TOML string, so quotes, backslashes, $,
// backticks and } (and anything not printable ASCII) would change what runs.
func checkHookURL(base string) error {
	u, err := neturl.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError(fmt.Sprintf("--url: %q is not an http:// or https:// URL", base))
	}
	for _, r := range base {
		if r <= ' ' || r > '~' {
			return usageError(fmt.Sprintf("--url: %q: %U cannot go into askd's hook command", base, r))
		}
		if strings.ContainsRune("\"'\\$`}", r) {
			return usageError(fmt.Sprintf("--url: %q: %c cannot go into askd's hook command", base, r))
		}
	}
	return nil
}
