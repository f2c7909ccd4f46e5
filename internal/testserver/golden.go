package testserver

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

// update rewrites the golden files instead of comparing with them: go test
// -update, in a package whose tests call Golden.
var update = flag.Bool("update", false, "rewrite golden files")

// Golden compares got with the file at path, or with -update writes it.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n%s\nwant:\n%s", path, got, want)
	}
}
