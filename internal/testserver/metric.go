package testserver

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// Metric is the value of the unlabelled metric name on base's /metrics, ""
// when it has none.
func Metric(t testing.TB, base, name string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(body)) {
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), name+" "); ok {
			return v
		}
	}
	return ""
}
