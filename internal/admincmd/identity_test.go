package admincmd

import (
	"encoding/json"
	"strings"
	"testing"
)

// askd token rotate and askd token link (SPEC §15), on a real database.

func TestTokenRotate(t *testing.T) {
	db := newDB(t)
	var made map[string]string
	if err := json.Unmarshal([]byte(askdCLI(t, append([]string{"token", "create", "--human", "lee", "--json"}, db...)...)), &made); err != nil {
		t.Fatal(err)
	}
	var rotated map[string]string
	if err := json.Unmarshal([]byte(askdCLI(t, append([]string{"token", "rotate", "lee", "--json"}, db...)...)), &rotated); err != nil {
		t.Fatal(err)
	}
	if rotated["name"] != "lee" || rotated["role"] != "human" || !strings.HasPrefix(rotated["token"], "askd_h_") || rotated["token"] == made["token"] {
		t.Errorf("rotate = %v, want a new human secret for lee", rotated)
	}
	refused(t, db, `token "nobody" not found`, "token", "rotate", "nobody")
}

func TestTokenLink(t *testing.T) {
	db := newDB(t)
	askdCLI(t, append([]string{"token", "create", "--human", "mo"}, db...)...)
	askdCLI(t, append([]string{"token", "create", "--human", "nia"}, db...)...)
	out := askdCLI(t, append([]string{"token", "link", "mo", "--issuer", "https://id.example.com", "--subject", "248289761001"}, db...)...)
	if !strings.Contains(out, `mo now signs in with subject "248289761001" at https://id.example.com`) {
		t.Errorf("link said %q", out)
	}
	// The flags read no environment: ASKD_ISSUER and ASKD_SUBJECT left in
	// a shell must not link anyone unasked.
	t.Setenv("ASKD_ISSUER", "https://id.example.com")
	t.Setenv("ASKD_SUBJECT", "1")
	refused(t, db, "give --issuer URL and --subject SUB", "token", "link", "nia")
	refused(t, db, "linked to mo", "token", "link", "nia", "--issuer", "https://id.example.com", "--subject", "248289761001")
	refused(t, db, `no person named "nobody"`, "token", "link", "nobody", "--issuer", "https://id.example.com", "--subject", "2")
}
