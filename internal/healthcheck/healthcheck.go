// Package healthcheck is askd healthcheck: exit status 0 when a running
// askd answers /readyz, 1 otherwise. The container image's HEALTHCHECK runs
// it, since the image holds nothing but askd (no shell, no curl).
package healthcheck

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/cli"
)

const synopsis = "[--url URL | --addr ADDR] [--timeout D]"

// Command is askd healthcheck. It asks URL/readyz, the URL being --url
// (ASKD_URL), else the one askd serve's --addr (ASKD_ADDR, as the image
// sets it) listens at: so in the image it needs no flag. Ready, it prints a
// line and returns nil; otherwise an error saying why, of exit status 1
// whatever the cause (a mistake in its flags too): container engines
// reserve status 2 of a health check.
func Command(ctx context.Context, e *cli.Env, args []string) error {
	err := check(ctx, e, args)
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return err
	}
	return failed{err}
}

func check(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "healthcheck", synopsis)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: askd healthcheck %s\n\n", synopsis)
		fmt.Fprintln(w, "Exit status 0 when the askd at --url, else at --addr, answers /readyz (its database")
		fmt.Fprintln(w, "answers and takes writes), 1 otherwise, saying why. For a container's or a")
		fmt.Fprintln(w, "supervisor's health check: the image's HEALTHCHECK runs it without flags.")
		fmt.Fprintln(w, "\nFlags (each also the environment variable named after it):")
		cli.PrintDefaults(e, fs)
	}
	url := fs.String("url", "", "the askd server's URL (default: http://ADDR, from --addr)")
	addr := fs.String("addr", "127.0.0.1:7777", "the address askd serve listens on, as its --addr: on all interfaces (:7788),\n"+
		"the check asks 127.0.0.1 at that port")
	timeout := fs.Duration("timeout", 5*time.Second, "how long the check may take")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("healthcheck: unexpected argument %q", fs.Arg(0)))
	}
	if *timeout <= 0 {
		return cli.UsageError("healthcheck: --timeout must be positive")
	}
	base := *url
	if base == "" {
		var err error
		if base, err = URLOf(*addr); err != nil {
			return err
		}
	}
	ready, err := readyz(ctx, base, *timeout)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "ready: %s\n", cli.Term(ready))
	return nil
}

// URLOf is the URL of the askd serve listening on addr (its --addr): on all
// interfaces (":7788", "0.0.0.0:7788", "[::]:7788") the loopback one.
func URLOf(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", cli.UsageError(fmt.Sprintf("healthcheck: --addr %q is not host:port", addr))
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// readyz asks base's /readyz and returns its URL when it answers 200, else
// an error saying why: askd's own words on a 503.
func readyz(ctx context.Context, base string, timeout time.Duration) (string, error) {
	u, err := neturl.Parse(base)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", cli.UsageError(fmt.Sprintf("healthcheck: --url %q is not an http(s) URL", base))
	}
	u = u.JoinPath("readyz")
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("not ready: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		return u.String(), nil
	}
	var said struct{ Error, Code string }
	if json.Unmarshal(body, &said) == nil && said.Error != "" {
		return "", fmt.Errorf("not ready: %s (%s, HTTP %d from %s)", said.Error, said.Code, resp.StatusCode, u)
	}
	return "", fmt.Errorf("not ready: HTTP %d from %s", resp.StatusCode, u)
}

// failed is a failed check: exit status 1, whatever the cause. It does not
// unwrap, so that cli.ExitCode never finds a cli.UsageError (status 2) in it.
type failed struct{ err error }

func (f failed) Error() string {
	if msg := f.err.Error(); !strings.HasPrefix(msg, "healthcheck: ") {
		return "healthcheck: " + msg
	}
	return f.err.Error()
}
