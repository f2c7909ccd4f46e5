package strictjson_test

import (
	"encoding/json"
	"testing"

	"github.com/askd-dev/askd"
)

var channelSeeds = []string{
	`{"type":"hook"}`,
	`{"type":"webhook","url":"https://example.com/hook","secret":"s3cret"}`,
	`{"type":"command","name":"resume"}`,
	`{"type":"command","name":"tmux.send-keys_1"}`,
	`{"type":"slack","url":"https://hooks.slack.com/services/x"}`,
	`{"type":"ntfy","url":"http://ntfy.sh/topic"}`,
	// invalid
	``, `{}`, `null`, `[]`, `{"type":"hook","url":"http://x"}`, `{"type":"webhook","url":"ftp://x","secret":""}`,
	`{"type":"webhook","url":"javascript:alert(1)","secret":"s"}`, `{"type":"command","argv":[]}`,
	`{"type":"command","argv":[" "]}`, "{\"type\":\"command\",\"argv\":[\"a\\u0000b\"]}", `{"type":"mail"}`,
	`{"type":"hook","extra":1}`, `{"type":"command","argv":"ls"}`, `{"type":"webhook","url":"http://[::1","secret":"s"}`,
	`{"type":"command","argv":["claude","-p","--resume","{session}","{prompt}"]}`, `{"type":"command","name":"-x"}`,
	`{"type":"command","name":"resume","argv":["sh"]}`, `{"type":"command"}`, `{"type":"hook","name":"resume"}`,
}

// FuzzDecodeChannel fuzzes a session channel body (PUT
// /api/sessions/{name}/channel) and notifier settings: decoding and both
// validators refuse with "path: rule", and what validates survives a trip
// through JSON.
func FuzzDecodeChannel(f *testing.F) {
	for _, s := range channelSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var ch askd.Channel
		if err := askd.Decode(body, &ch); err != nil {
			checkRefusal(t, err)
			return
		}
		notifier := ch
		if err := notifier.ValidateNotifier(); err != nil {
			checkRefusal(t, err)
		}
		if err := ch.Validate(); err != nil {
			checkRefusal(t, err)
			return
		}
		b, err := json.Marshal(&ch)
		if err != nil {
			t.Fatalf("Marshal of a valid channel: %v", err)
		}
		var again askd.Channel
		if err := askd.Decode(b, &again); err != nil {
			t.Fatalf("Decode of re-encoded %s: %v", b, err)
		}
		if err := again.Validate(); err != nil {
			t.Fatalf("Validate of re-encoded %s: %v", b, err)
		}
		r := ch.Redacted()
		if ch.Secret != "" && r.Secret == ch.Secret {
			t.Fatalf("Redacted kept the secret")
		}
	})
}

var nameSeeds = []string{"agent-1", "claude:abc-123", "", " ", "a/b", "\x00", "データ", "x.y_z"}

// FuzzValidName fuzzes session and token names: refused with "path: rule".
func FuzzValidName(f *testing.F) {
	for _, s := range nameSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if err := askd.ValidName("session", name); err != nil {
			checkRefusal(t, err)
		}
	})
}
