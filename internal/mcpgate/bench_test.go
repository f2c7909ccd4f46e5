package mcpgate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAllowed is a call --allow lets through, against the same call
// made to the server directly (SPEC §8: at most 1 ms added at p50): the
// scripted go-sdk server's echo over stdio, a go-sdk client. It reports
// each call's p50 and p99 and the CPU this process spends per call (the
// client, and the gate when there is one; the server is a process of its
// own either way). Run it with -count to see its spread.
func BenchmarkAllowed(b *testing.B) {
	f := newFixture(b)
	for _, through := range []string{"direct", "gate"} {
		b.Run(through, func(b *testing.B) {
			var cs *mcp.ClientSession
			if through == "direct" {
				argv := scripted(b, "")
				c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				var err error
				if cs, err = c.Connect(context.Background(), &mcp.CommandTransport{Command: exec.Command(argv[0], argv[1:]...)}, nil); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { cs.Close() })
			} else {
				g := startGate(b, f.env(), append([]string{"--name", "scripted", "--allow", "echo", "--"}, scripted(b, "")...)...)
				cs = g.connect(b, "", nil)
			}
			params := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
			for range 50 { // warm both ends up
				if _, err := cs.CallTool(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
			took := make([]time.Duration, 0, b.N)
			cpu := cpuTime()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				res, err := cs.CallTool(context.Background(), params)
				took = append(took, time.Since(start))
				if err != nil || res.IsError {
					b.Fatalf("call: %v %+v", err, res)
				}
			}
			b.StopTimer()
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs")
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// BenchmarkHeldCalls measures the gate's memory with 100 calls waiting for
// a person: the gate a process of its own, its resident set before the
// calls and once all 100 approvals are pending in askd. Run it with
// -benchtime=1x.
func BenchmarkHeldCalls(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("reads the gate's resident set from /proc")
	}
	const calls = 100
	for range b.N {
		f := newFixtureWith(b, app.Config{MaxPending: 2 * calls})
		w := f.watch(b, "held")
		p := startGateProcess(b, f, append([]string{"--name", "scripted", "--session", "held", "--"}, scripted(b, "")...))
		if _, err := p.cs.ListTools(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		before := rss(b, p.cmd.Process.Pid)
		// The go-sdk client's Close waits for its calls: they are cut off
		// first.
		ctx, cancel := context.WithCancel(context.Background())
		b.Cleanup(cancel)
		for i := range calls {
			go p.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint("call ", i)}})
		}
		for range calls {
			w.asked(b)
		}
		waiting(b, f, calls)
		after := rss(b, p.cmd.Process.Pid)
		b.ReportMetric(float64(before)/1024, "rss-idle-KiB")
		b.ReportMetric(float64(after)/1024, "rss-100-held-KiB")
		b.ReportMetric(float64(after-before)/calls/1024, "KiB/held-call")
	}
}

// rss is the resident set of process pid, in bytes.
func rss(tb testing.TB, pid int) int64 {
	tb.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb * 1024
		}
	}
	tb.Fatal("no VmRSS")
	return 0
}
