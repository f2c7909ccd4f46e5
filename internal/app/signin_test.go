package app_test

import (
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// TestBrowserSessionLifetime: a browser session ends after BrowserSessionIdle
// without use, is kept alive by use, and ends BrowserSessionMax after
// signing in however much it is used.
func TestBrowserSessionLifetime(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	svc := newService(t, app.Config{Now: clock})
	ctx := t.Context()
	if _, _, err := svc.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "alice", Role: askd.RoleHuman}); err != nil {
		t.Fatal(err)
	}
	signIn := func(t *testing.T) string {
		t.Helper()
		code, made, err := svc.CreateSignInCode(ctx, app.Itself, "")
		if err != nil || made.Human != "alice" || !made.ExpiresAt.Equal(clock().Add(app.SignInCodeTTL)) {
			t.Fatalf("CreateSignInCode = %+v, %v", made, err)
		}
		id, err := svc.SignInWithCode(ctx, code)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	day := 24 * time.Hour
	tests := []struct {
		name  string
		uses  []time.Duration // waits before each use that must work
		last  time.Duration   // the wait before the use that must fail
		ended bool
	}{
		{"used within the idle time", []time.Duration{day}, app.BrowserSessionIdle - time.Hour, false},
		{"idle too long", nil, app.BrowserSessionIdle + time.Second, true},
		{"kept alive by use", []time.Duration{20 * day, 20 * day}, 20 * day, false},
		{"past the longest lifetime", []time.Duration{25 * day, 25 * day, 25 * day}, 15*day + time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := signIn(t)
			for i, d := range tt.uses {
				advance(d)
				if _, err := svc.BrowserCaller(ctx, id); err != nil {
					t.Fatalf("use %d: %v", i+1, err)
				}
			}
			advance(tt.last)
			c, err := svc.BrowserCaller(ctx, id)
			switch {
			case tt.ended && askd.ErrorCode(err) != askd.EUNAUTHORIZED:
				t.Fatalf("last use: %+v, %v; want EUNAUTHORIZED", c, err)
			case !tt.ended && (err != nil || c.Name != "alice" || c.Role != askd.RoleHuman):
				t.Fatalf("last use: %+v, %v; want alice, a human", c, err)
			}
		})
	}
}

func TestSignInErrors(t *testing.T) {
	svc := newService(t, app.Config{})
	ctx := t.Context()
	if _, _, err := svc.CreateSignInCode(ctx, app.Itself, ""); askd.ErrorCode(err) != askd.EINVALID {
		t.Errorf("a code with no human token: %v, want EINVALID", err)
	}
	_, agent, err := svc.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "robot", Role: askd.RoleAgent})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		do   func() error
		code string
	}{
		{"unknown code", func() error { _, err := svc.SignInWithCode(ctx, "nope"); return err }, askd.EUNAUTHORIZED},
		{"agent token in the form", func() error { _, err := svc.SignInWithToken(ctx, agent); return err }, askd.EFORBIDDEN},
		{"unknown token in the form", func() error { _, err := svc.SignInWithToken(ctx, "askd_h_nope"); return err }, askd.EUNAUTHORIZED},
		{"no cookie value", func() error { _, err := svc.BrowserCaller(ctx, ""); return err }, askd.EUNAUTHORIZED},
		{"a token as the cookie", func() error { _, err := svc.BrowserCaller(ctx, agent); return err }, askd.EUNAUTHORIZED},
		{"signing out an unknown id", func() error { return svc.SignOut(ctx, "nope") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); askd.ErrorCode(err) != tt.code {
				t.Errorf("got %v, want code %q", err, tt.code)
			}
		})
	}
}
