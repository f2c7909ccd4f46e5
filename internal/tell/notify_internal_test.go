package tell

import (
	"mime"
	"strings"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// ntfyLabels reads the labels back from an Actions header as ntfy's simple
// format does (its server/actions.go): RFC 2047 words decoded first; actions
// split at ';', fields at ','; a value in double or single quotes may hold
// both, its quote escaped by a backslash; the label is the second field.
func ntfyLabels(t *testing.T, header string) []string {
	t.Helper()
	decoded, err := new(mime.WordDecoder).DecodeHeader(header)
	if err != nil {
		t.Fatalf("decode %q: %v", header, err)
	}
	var labels []string
	field, fields := 0, []string{}
	for i := 0; i <= len(decoded); {
		for i < len(decoded) && decoded[i] == ' ' {
			i++
		}
		var value string
		if i < len(decoded) && (decoded[i] == '"' || decoded[i] == '\'') {
			q := decoded[i]
			j := i + 1
			for j < len(decoded) && (decoded[j] != q || decoded[j-1] == '\\') {
				j++
			}
			if j == len(decoded) {
				t.Fatalf("unterminated quote in %q", decoded)
			}
			value = strings.ReplaceAll(decoded[i+1:j], `\`+string(q), string(q))
			i = j + 1
			for i < len(decoded) && decoded[i] == ' ' {
				i++
			}
		} else {
			j := i
			for j < len(decoded) && decoded[j] != ',' && decoded[j] != ';' {
				j++
			}
			value = strings.TrimSpace(decoded[i:j])
			i = j
		}
		fields = append(fields, value)
		field++
		if i >= len(decoded) || decoded[i] == ';' {
			if len(fields) < 2 {
				t.Fatalf("action without a label in %q", decoded)
			}
			labels = append(labels, fields[1])
			fields, field = nil, 0
			if i >= len(decoded) {
				break
			}
		} else if decoded[i] != ',' {
			t.Fatalf("unexpected %q at %d in %q", decoded[i], i, decoded)
		}
		i++
	}
	return labels
}

// Labels holding what ntfy's simple format reads (commas, semicolons,
// quotes, '=', a trailing backslash) or non-ASCII text come back as they
// were, but for the space a trailing backslash gets.
func TestNtfyActionsQuoteLabels(t *testing.T) {
	w := &Worker{opts: Options{LinkBase: "https://askd.example.com"}}
	labels := []string{"Monday", "Yes, ship it", "Nein; später", `say "hi"`, "it's", "a=b", `C:\`, "  padded  ", "日本"}
	for _, label := range labels {
		t.Run(label, func(t *testing.T) {
			links := []app.MintedLink{{OneTap: askd.OneTap{Label: label}, Code: "abc"}, {OneTap: askd.OneTap{Label: "Other"}, Code: "def"}}
			header := mime.QEncoding.Encode("utf-8", w.ntfyActions(links))
			got := ntfyLabels(t, header)
			want := label
			if strings.HasSuffix(label, `\`) {
				want += " "
			}
			if len(got) != 2 || got[0] != want || got[1] != "Other" {
				t.Errorf("labels read back %q, want [%q Other] (header %q)", got, want, header)
			}
		})
	}
}
