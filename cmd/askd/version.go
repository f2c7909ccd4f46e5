package main

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/mcpstdio"
)

// version is set at build time with -ldflags "-X main.version=…"; without
// it askd version reads the build info (buildInfo).
var version = "dev"

func init() {
	version = buildInfo().Version
	mcpstdio.Version = version // askd mcp gives askd's version as its own
}

func cmdVersion(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "version", "[--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("version: unexpected argument %q", fs.Arg(0)))
	}
	b := buildInfo()
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(b)
	}
	fmt.Fprintln(e.Stdout, "askd", b.Version)
	if b.Revision != "" {
		rev := b.Revision
		if b.Modified {
			rev += " (with uncommitted changes)"
		}
		fmt.Fprintln(e.Stdout, "  revision ", rev)
	}
	if b.Time != "" {
		fmt.Fprintln(e.Stdout, "  committed", b.Time)
	}
	fmt.Fprintln(e.Stdout, "  built with", b.Go)
	return nil
}

// build is what askd version reports.
type build struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"` // the VCS revision built from
	Time     string `json:"time,omitempty"`     // its commit time, RFC 3339
	Modified bool   `json:"modified,omitempty"` // the tree had uncommitted changes
	Go       string `json:"go"`
}

// buildInfo reads the version from the binary's build info: the module
// version go install gave it (v1.2.3, or a pseudo-version), else "dev", and
// the VCS revision go build stamps from a checkout. -ldflags -X main.version
// overrides the version.
func buildInfo() build {
	b := build{Version: version, Go: runtime.Version()}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if v := info.Main.Version; b.Version == "dev" && v != "" && v != "(devel)" {
		b.Version = v
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "dev" && b.Revision != "" {
		b.Version = "dev-" + b.Revision[:min(12, len(b.Revision))]
		if b.Modified {
			b.Version += "-dirty"
		}
	}
	return b
}
