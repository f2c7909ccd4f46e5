package tell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/app"
)

// NewGate returns the before-tell gate spec names: an http(s) URL, POSTed the
// request as JSON (2xx allows; any other status refuses, its body, or its
// JSON "reason", saying why), or a command, as a JSON array of arguments or
// words split on spaces, run without a shell with the request as JSON on
// stdin (exit 0 allows; another status refuses, its output saying why). A
// gate that cannot be reached, cannot be started or takes longer than
// timeout is an error, which askd treats as a refusal.
func NewGate(spec string, timeout time.Duration) (app.Gate, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	if strings.HasPrefix(spec, "http://") || strings.HasPrefix(spec, "https://") {
		return &httpGate{url: spec, client: newHTTPClient(timeout)}, nil
	}
	argv, err := ParseArgv(spec)
	if err != nil {
		return nil, fmt.Errorf("--before-tell: %w", err)
	}
	return &commandGate{argv: argv, timeout: timeout}, nil
}

type httpGate struct {
	url    string
	client *http.Client
}

func (g *httpGate) Allow(ctx context.Context, req *app.GateRequest) (bool, string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return false, "", err
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url, bytes.NewReader(body))
	if err != nil {
		return false, "", err
	}
	r.Header.Set("Content-Type", "application/json")
	resp, err := g.client.Do(r)
	if err != nil {
		return false, "", fmt.Errorf("gate %s: %w", g.url, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return true, "", nil
	}
	var j struct {
		Reason string `json:"reason"`
	}
	reason := oneLine(string(data))
	if json.Unmarshal(data, &j) == nil && j.Reason != "" {
		reason = oneLine(j.Reason)
	}
	if reason == "" {
		reason = "HTTP " + resp.Status
	}
	return false, reason, nil
}

type commandGate struct {
	argv    []string
	timeout time.Duration
}

func (g *commandGate) Allow(ctx context.Context, req *app.GateRequest) (bool, string, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return false, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.argv[0], g.argv[1:]...)
	cmd.Stdin = bytes.NewReader(body)
	var out tail
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	if err == nil {
		return true, "", nil
	}
	if ctx.Err() != nil {
		return false, "", fmt.Errorf("gate %s: timed out after %s", g.argv[0], g.timeout)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		reason := oneLine(out.String())
		if reason == "" {
			reason = fmt.Sprintf("%s exited with status %d", g.argv[0], ee.ExitCode())
		}
		return false, reason, nil
	}
	return false, "", fmt.Errorf("gate %s: %w", g.argv[0], err)
}
