package mcpgate

import (
	"strings"
	"testing"

	"github.com/askd-dev/askd/internal/cli"
)

// TestCommandLine: what askd gate mcp makes of its command line, and the
// mistakes it refuses (exit 2) before anything starts.
func TestCommandLine(t *testing.T) {
	base := map[string]string{"ASKD_TOKEN": "askd_a_token", "ASKD_URL": "http://127.0.0.1:7777"}
	parse := func(env map[string]string, args ...string) (*gate, error) {
		e := &cli.Env{Stdin: strings.NewReader(""), Stdout: &strings.Builder{}, Stderr: &strings.Builder{}, Getenv: func(k string) string { return env[k] }}
		return parseGate(e, args)
	}
	with := func(extra ...string) map[string]string {
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		for i := 0; i+1 < len(extra); i += 2 {
			env[extra[i]] = extra[i+1]
		}
		return env
	}

	names := []struct {
		args []string
		name string
	}{
		{[]string{"--name", "fs", "--", "npx", "-y", "@modelcontextprotocol/server-filesystem", "/srv/data/"}, "fs"},
		{[]string{"--", "npx", "-y", "@modelcontextprotocol/server-filesystem"}, "server-filesystem"},
		{[]string{"--", "node", "dist/index.js", "stdio", "--verbose"}, "stdio"},
		{[]string{"--upstream", "https://mcp.example.com/mcp"}, "mcp"},
	}
	for _, c := range names {
		g, err := parse(base, c.args...)
		if err != nil || g.name != c.name || g.session != c.name {
			t.Errorf("%q: %v, name %q; want NAME and session %q", c.args, err, g.name, c.name)
		}
	}

	// What the gate lets through is said on its command line: these read
	// no environment variable.
	env := with("ASKD_ALLOW", "write_file", "ASKD_NAME", "evil", "ASKD_UPSTREAM", "http://evil.example/mcp",
		"ASKD_LISTEN", "0.0.0.0:80", "ASKD_UPSTREAM_HEADER", "X-Evil: 1", "ASKD_ALLOWED_HOST", "evil.example", "ASKD_SESSION", "mine")
	g, err := parse(env, "--name", "fs", "--", "server")
	switch {
	case err != nil:
		t.Fatal(err)
	case len(g.allow) != 0 || g.name != "fs" || g.upstream != "" || g.listen != "" || len(g.headers) != 0 || len(g.allowedHosts) != 0:
		t.Errorf("the environment set a flag that reads none: %+v", g)
	case g.session != "mine":
		t.Errorf("session %q, want ASKD_SESSION's", g.session)
	}

	mistakes := []struct {
		env  map[string]string
		args []string
		want string
	}{
		{base, []string{"--name", "fs"}, "after --"},
		{base, []string{"--name", "fs", "--upstream", "http://x/mcp", "--", "server"}, "not both"},
		{base, []string{"--name", "fs", "--upstream", "ftp://x/mcp"}, "not an http(s) URL"},
		{base, []string{"--name", "fs", "--upstream", "http://x/mcp", "--upstream-header", "no colon"}, "'Name: value'"},
		{base, []string{"--name", "two words", "--", "server"}, "one word"},
		{base, []string{"--name", "fs\u202e", "--", "server"}, "one word"},
		{base, []string{"--name", strings.Repeat("n", 101), "--", "server"}, "at most 100"},
		{base, []string{"--name", "fs", "--elicitation", "nobody", "--", "server"}, "server or client"},
		{base, []string{"--name", "fs", "--wait", "-1s", "--", "server"}, "0 or more"},
		{base, []string{"--name", "fs", "--listen", "127.0.0.1:0", "--allowed-host", "evil.example/x", "--", "server"}, "--allowed-host: \"evil.example/x\" is not a host name"},
		{base, []string{"--name", "fs", "--listen", "nowhere", "--", "server"}, "host:port"},
		{base, []string{"--name", "fs", "--listen", "0.0.0.0:7790", "--", "server"}, "--listen-token-file"},
		{base, []string{"--name", "fs", "--allowed-host", "x.example", "--", "server"}, "for --listen"},
		{with("ASKD_TOKEN", ""), []string{"--name", "fs", "--", "server"}, "no agent token"},
		{with("ASKD_TOKEN", "askd_h_person"), []string{"--name", "fs", "--", "server"}, "human token"},
		{base, []string{"--name", "fs", "--url", "localhost:7777", "--", "server"}, "--url"},
		{base, []string{"--name", "fs", "--token-file", "/nonexistent/token", "--", "server"}, "--token-file"},
	}
	for _, c := range mistakes {
		_, err := parse(c.env, c.args...)
		if cli.ExitCode(err) != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v (exit %d), want a usage error saying %q", c.args, err, cli.ExitCode(err), c.want)
		}
	}
}
