package install

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
)

// tokenFileName is the file install writes the agent token into, beside
// the config of a client that passes the gate no environment.
const tokenFileName = "askd-token"

// tokenSource decides where the gate finds the agent token, and returns
// the token (to make sure it never lands in the file): the file
// --token-file names, checked; for a client that expands no variables,
// ASKD_TOKEN of install's environment, to be written (write) into a 0600
// file beside the config; else a reference to ASKD_TOKEN (file "").
func tokenSource(e *cli.Env, c *mcpClient, path, tokenFile string) (token, file string, write bool, err error) {
	if tokenFile != "" {
		if token, err = readTokenFile(tokenFile); err != nil {
			return "", "", false, err
		}
		file, err = filepath.Abs(tokenFile)
		return token, file, false, err
	}
	token = strings.TrimSpace(e.Getenv("ASKD_TOKEN"))
	if c.ref != nil {
		return token, "", false, nil
	}
	if token == "" {
		return "", "", false, cli.UsageError(fmt.Sprintf("install mcp-gate: %s passes the gate no environment, so the gate reads the agent token from a file: set ASKD_TOKEN (an agent token: askd token create --agent NAME) for install to write it into %s beside the config (mode 0600), or pass --token-file FILE",
			c.name, tokenFileName))
	}
	if err := checkAgentToken("ASKD_TOKEN", token); err != nil {
		return "", "", false, err
	}
	abs, err := filepath.Abs(path)
	// Beside the config as named, not where a symlink points: a config kept
	// in a dotfiles checkout must not get a secret beside it there.
	return token, filepath.Join(filepath.Dir(abs), tokenFileName), true, err
}

// readTokenFile reads an agent token from a file only its owner may read,
// as the gate will (it refuses any other).
func readTokenFile(path string) (string, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return "", cli.UsageError(fmt.Sprintf("install mcp-gate: --token-file: %v", err))
	case !fi.Mode().IsRegular():
		return "", cli.UsageError(fmt.Sprintf("install mcp-gate: --token-file %s: not a regular file", path))
	case fi.Mode().Perm()&0o077 != 0:
		return "", cli.UsageError(fmt.Sprintf("install mcp-gate: --token-file %s: mode %04o, but the gate reads a token file only its owner may read (chmod 600 %s)", path, fi.Mode().Perm(), path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", cli.UsageError(fmt.Sprintf("install mcp-gate: --token-file: %v", err))
	}
	token := strings.TrimSpace(string(data))
	if token == "" {
		return "", cli.UsageError(fmt.Sprintf("install mcp-gate: --token-file %s: empty", path))
	}
	return token, checkAgentToken("--token-file", token)
}

func checkAgentToken(from, token string) error {
	if strings.HasPrefix(token, app.TokenPrefix(askd.RoleHuman)) {
		return cli.UsageError(fmt.Sprintf("install mcp-gate: %s holds a human token; the gate asks as an agent: give an agent token (askd token create --agent NAME)", from))
	}
	return nil
}

// writeSecret writes token into path, mode 0600, unless it holds it
// already with that mode.
func writeSecret(path, token string) (bool, error) {
	data := []byte(token + "\n")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() == 0o600 {
			return false, nil
		}
	}
	return true, replaceFile(path, data, 0o600)
}
