package askd

import (
	"fmt"
	"strings"
	"testing"
)

// benchBody is an approval body with n lines of details and n payload items.
func benchBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"kind":"approval","title":"Allow Bash: make test","details":"`)
	b.WriteString(strings.Repeat(`line of a diff with some text \u00e9 and \"quotes\"\n`, n))
	b.WriteString(`","payload":{"command":"make test","env":{"A":"1","B":"2"},"files":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"path":"src/file%d.go","lines":[1,2,3],"note":"日本語"}`, i)
	}
	b.WriteString(`]}}`)
	return []byte(b.String())
}

// BenchmarkStrict compares the strict scan with the whole of Decode on bodies
// of a few hundred bytes to half a MiB: the scan was 5–10% of Decode's time.
func BenchmarkStrict(b *testing.B) {
	for _, n := range []int{1, 100, 5000} {
		body := benchBody(n)
		b.Run(fmt.Sprintf("checkJSON/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, r := checkJSON(body); r != "" {
					b.Fatal(r)
				}
			}
		})
		b.Run(fmt.Sprintf("Decode/%dB", len(body)), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var in AskInput
				if err := Decode(body, &in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
