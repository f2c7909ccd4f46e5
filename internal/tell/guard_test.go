package tell_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// The attacks of the isolation issue, each through the real HTTP server:
// refused with an error naming the rule, and nothing stored changed.

// TestAgentCannotChooseAProgram: a channel body carrying argv is refused,
// and so is a template the server does not define; the stored channel stays.
func TestAgentCannotChooseAProgram(t *testing.T) {
	dir := t.TempDir()
	pwned := filepath.Join(dir, "pwned")
	argvAttack := fmt.Sprintf(`{"type":"command","argv":["sh","-c","id > %s"]}`, pwned)
	tests := []struct {
		name      string
		templates map[string][]string
		body      string
		want      string
	}{
		{"argv, no templates", nil, argvAttack, "argv: not accepted: programs come only from the operator's command templates"},
		{"argv beside templates", map[string][]string{"resume": {"claude"}}, argvAttack, "argv: not accepted"},
		{"argv beside a name", map[string][]string{"resume": {"claude"}}, `{"type":"command","name":"resume","argv":["sh"]}`, "argv: not accepted"},
		{"no templates", nil, `{"type":"command","name":"resume"}`, `name: no command template \"resume\": this server defines none`},
		{"unknown template", map[string][]string{"resume": {"claude"}, "tmux": {"tmux"}}, `{"type":"command","name":"sh"}`,
			`name: no command template \"sh\"; this server defines: resume, tmux`},
		{"a name like an option", map[string][]string{"resume": {"claude"}}, `{"type":"command","name":"--help"}`, "name: must start with a letter or digit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := start(t, app.Config{TellCommands: tt.templates})
			agent := srv.Agent("s1")
			if _, err := agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelHook}); err != nil {
				t.Fatal(err)
			}
			status, body := putChannel(t, srv, "s1", tt.body)
			if status != http.StatusBadRequest || !strings.Contains(body, tt.want) || !strings.Contains(body, `"code":"invalid"`) {
				t.Errorf("%d %s, want 400 invalid saying %q", status, body, tt.want)
			}
			if got := storedChannel(t, srv, "s1"); !reflect.DeepEqual(got, &askd.Channel{Type: askd.ChannelHook}) {
				t.Errorf("stored %+v after a refusal, want the hook channel", got)
			}
			a := askDecision(t, agent, "Which day?")
			if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
				t.Fatal(err)
			}
			if d := delivery(t, srv, a.ID); d.Channel.Type != askd.ChannelHook {
				t.Errorf("delivery by %s, want the hook", d.Channel.Type)
			}
			if _, err := os.Stat(pwned); err == nil {
				t.Fatal("the agent's program ran")
			}
		})
	}
}

// readArgs reads what tellScript wrote: its arguments, NUL-separated.
func readArgs(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00")
}

// TestCommandTemplateRuns: the operator's program — a shell script, the
// operator's to write — gets the session and the told text each as one
// argument, whatever they hold, and an agent's argv never replaces it.
func TestCommandTemplateRuns(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "tell.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nout=$1; shift\nprintf '%s\\0' \"$@\" > \"$out\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "args")
	srv := start(t, app.Config{TellCommands: map[string][]string{
		"tell": {script, out, "--session", "{session}", "--", "{prompt}", "ask-{id}"},
	}})
	agent := srv.Agent("deploy-7")
	got, err := agent.SetChannel(t.Context(), "deploy-7", askd.Channel{Type: askd.ChannelCommand, Name: "tell"})
	if err != nil || got.Name != "tell" || got.Argv != nil {
		t.Fatalf("set: %+v, %v", got, err)
	}
	a := askDecision(t, agent, "Deploy on Monday or Friday?")
	const answer = `Monday; rm -rf ~ "$(id)" 'x' *`
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: answer}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "told by the command", func() bool { return count(history(t, srv, a.ID), askd.ActionTold) == 1 })
	want := []string{"--session", "deploy-7", "--",
		fmt.Sprintf(`The user answered your ask #%d (decision: "Deploy on Monday or Friday?"): %s`, a.ID, answer), fmt.Sprintf("ask-%d", a.ID)}
	if args := readArgs(t, out); !slices.Equal(args, want) {
		t.Errorf("arguments\n got %q\nwant %q", args, want)
	}

	// The attack: the agent tries to swap in a program of its own.
	pwned := filepath.Join(dir, "pwned")
	status, body := putChannel(t, srv, "deploy-7", fmt.Sprintf(`{"type":"command","argv":["sh","-c","id > %s"]}`, pwned))
	if status != http.StatusBadRequest || !strings.Contains(body, "argv: not accepted: programs come only from the operator's command templates") {
		t.Errorf("argv from the agent: %d %s, want 400 naming the rule", status, body)
	}
	if ch := storedChannel(t, srv, "deploy-7"); !reflect.DeepEqual(ch, &askd.Channel{Type: askd.ChannelCommand, Name: "tell"}) {
		t.Errorf("stored %+v after the refusal, want the template as set", ch)
	}
	b := askDecision(t, agent, "And the hotfix?")
	if _, err := srv.Human().Answer(t.Context(), b.ID, &askd.Answer{Answer: "Friday"}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the second tell", func() bool { return count(history(t, srv, b.ID), askd.ActionTold) == 1 })
	if args := readArgs(t, out); args[len(args)-1] != fmt.Sprintf("ask-%d", b.ID) {
		t.Errorf("second run's arguments %q", args)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the agent's program ran")
	}
}

// storeChannel writes session's channel straight into the store, as an
// older askd (or a hand-edited database) left it.
func storeChannel(t *testing.T, srv *testserver.Server, session string, ch *askd.Channel) {
	t.Helper()
	if err := srv.Store.Update(t.Context(), func(tx askd.Tx) error { return tx.Channels.SetChannel(t.Context(), srv.AgentName, session, ch) }); err != nil {
		t.Fatal(err)
	}
}

// TestStoredArgvChannelIsNotRun: a command channel holding argv, stored
// before programs came only from templates, never runs; the delivery fails
// at once saying why, and the agent still learns the answer the hook way.
func TestStoredArgvChannelIsNotRun(t *testing.T) {
	pwned := filepath.Join(t.TempDir(), "pwned")
	srv := start(t, app.Config{TellCommands: map[string][]string{"resume": {"true"}}})
	storeChannel(t, srv, "s1", &askd.Channel{Type: askd.ChannelCommand, Argv: []string{"sh", "-c", "touch " + pwned}})
	agent := srv.Agent("s1")
	a := askDecision(t, agent, "Which day?")
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the refusal in the history", func() bool { return count(history(t, srv, a.ID), askd.ActionTellFail) == 1 })
	d := delivery(t, srv, a.ID)
	if d.Status != askd.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, "holds a program chosen by an agent token") {
		t.Errorf("delivery %+v, want failed at once saying why", d)
	}
	for _, e := range history(t, srv, a.ID) {
		if e.Action == askd.ActionTellFail && !strings.Contains(e.Note, "so it was not run") {
			t.Errorf("tell_failed note %q does not say why", e.Note)
		}
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("the stored argv ran")
	}
	got, err := agent.Check(t.Context(), a.ID, 0)
	if err != nil || got.Answer == nil || got.Answer.Answer != "Monday" {
		t.Fatalf("check: %+v, %v; want the answer", got, err)
	}
}

// TestWebhookDestinationsRefusedWhenSet: URLs naming the server's own
// machine or networks are refused when set, unless the operator allows
// them.
func TestWebhookDestinationsRefusedWhenSet(t *testing.T) {
	srv := start(t, app.Config{})
	before := askd.Channel{Type: askd.ChannelWebhook, URL: "https://hooks.example/tell", Secret: "k"}
	if _, err := srv.Agent("s1").SetChannel(t.Context(), "s1", before); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ url, want string }{
		{"http://169.254.169.254/latest/meta-data/", "url: host 169.254.169.254: link-local address"},
		{"http://[::1]:7777/api/asks", "url: host ::1: loopback address"},
		{"http://localhost:7777/", "url: host localhost: names this machine (loopback)"},
		{"http://localhost.:7777/", "url: host localhost.: names this machine (loopback)"},
		{"http://0.0.0.0:7777/", "url: host 0.0.0.0: unspecified address"},
		{"http://127.1:7777/", "url: host 127.1: loopback address"},
		{"http://10.0.0.1/", "url: host 10.0.0.1: private address"},
		{"http://192.168.1.1/", "url: host 192.168.1.1: private address"},
		{"http://[::ffff:127.0.0.1]:7777/", "url: host ::ffff:127.0.0.1: loopback address"},
		{"http://[fd00::1]/", "url: host fd00::1: private address"},
		{"http://100.64.0.1/", "carrier-grade NAT"},
		{"http://224.0.0.251/", "multicast address"},
		{"gopher://hooks.example/", `url: must be an http or https URL, not \"gopher\"`},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			body, _ := json.Marshal(askd.Channel{Type: askd.ChannelWebhook, URL: tt.url, Secret: "k"})
			status, reply := putChannel(t, srv, "s1", string(body))
			if status != http.StatusBadRequest || !strings.Contains(reply, tt.want) {
				t.Errorf("%d %s, want 400 saying %q", status, reply, tt.want)
			}
			if got := storedChannel(t, srv, "s1"); !reflect.DeepEqual(got, &before) {
				t.Errorf("stored %+v after a refusal, want %+v", got, before)
			}
		})
	}

	allowing := start(t, app.Config{WebhookAllow: loopback})
	if _, err := allowing.Agent("s1").SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: "http://127.0.0.1:7777/tell", Secret: "k"}); err != nil {
		t.Errorf("127.0.0.1 with --webhook-allow 127.0.0.1: %v", err)
	}
	if _, err := allowing.Agent("s1").SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: "http://[::1]:7777/tell", Secret: "k"}); !strings.Contains(askd.ErrorMessage(err), "url: host ::1: loopback address") {
		t.Errorf("::1 with --webhook-allow 127.0.0.1: %v, want refused", err)
	}
}

// resolveToLoopback returns a resolver whose DNS server (in the test)
// answers every A query with 127.0.0.1: a public-looking name that resolves
// to the askd host, as a rebinding attacker's would.
func resolveToLoopback(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if reply, err := answerLoopback(buf[:n]); err == nil {
				pc.WriteTo(reply, from)
			}
		}
	}()
	server := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", server)
	}}
}

// answerLoopback answers a DNS query: A 127.0.0.1 for an A question, no
// records for any other.
func answerLoopback(query []byte) ([]byte, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, err
	}
	q, err := p.Question()
	if err != nil {
		return nil, err
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
	if err := b.StartQuestions(); err != nil {
		return nil, err
	}
	if err := b.Question(q); err != nil {
		return nil, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, err
	}
	if q.Type == dnsmessage.TypeA {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 1}
		if err := b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}}); err != nil {
			return nil, err
		}
	}
	return b.Finish()
}

// TestWebhookGuardedWhenDialled: a URL with a public-looking name passes
// the check when set, but resolves to 127.0.0.1; the dialer's guard sees
// that address and refuses it, unless the operator allows it by CIDR or by
// the name.
func TestWebhookGuardedWhenDialled(t *testing.T) {
	resolver := resolveToLoopback(t)
	tests := []struct {
		name      string
		allow     askd.WebhookAllow
		delivered bool
	}{
		{"refused", askd.WebhookAllow{}, false},
		{"allowed by CIDR", loopback, true},
		{"allowed by name", askd.WebhookAllow{Hosts: []string{"hooks.public-example.com"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startResolving(t, app.Config{TellAttempts: 3, WebhookAllow: tt.allow}, resolver)
			rcv := newReceiver(t, nil)
			port := rcv.Listener.Addr().(*net.TCPAddr).Port
			agent := srv.Agent("s1")
			url := fmt.Sprintf("http://hooks.public-example.com:%d/tell", port)
			if _, err := agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: url, Secret: "k"}); err != nil {
				t.Fatalf("set: %v (a public-looking name passes when set)", err)
			}
			a := askDecision(t, agent, "Which day?")
			if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
				t.Fatal(err)
			}
			if tt.delivered {
				testserver.Eventually(t, "told", func() bool { return count(history(t, srv, a.ID), askd.ActionTold) == 1 })
				if n := len(rcv.got()); n != 1 {
					t.Errorf("%d requests, want 1", n)
				}
				return
			}
			testserver.Eventually(t, "the refusal", func() bool { return count(history(t, srv, a.ID), askd.ActionTellFail) == 1 })
			const rule = "refused to connect to 127.0.0.1: loopback address; agents' and people's webhooks never reach it unless the operator allows it"
			if d := delivery(t, srv, a.ID); d.Status != askd.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, rule) {
				t.Errorf("delivery %+v, want failed at once saying %q", d, rule)
			}
			if n := len(rcv.got()); n != 0 {
				t.Errorf("the receiver on 127.0.0.1 got %d requests", n)
			}
		})
	}
}

// TestPersonNotifyGuardedWhenDialled: a person's own ntfy topic and
// webhook (PUT /api/me/notify) are held to the guard of agents' webhooks
// (SPEC §10): a public-looking name that resolves to 127.0.0.1 passes when
// set, and is refused when dialled, unless the operator allows it.
func TestPersonNotifyGuardedWhenDialled(t *testing.T) {
	resolver := resolveToLoopback(t)
	tests := []struct {
		name      string
		allow     askd.WebhookAllow
		delivered bool
	}{
		{"refused", askd.WebhookAllow{}, false},
		{"allowed by CIDR", loopback, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := startResolving(t, app.Config{TellAttempts: 3, WebhookAllow: tt.allow}, resolver)
			rcv := newReceiver(t, nil)
			base := fmt.Sprintf("http://notify.public-example.com:%d", rcv.Listener.Addr().(*net.TCPAddr).Port)
			n := askd.PersonNotify{Ntfy: base + "/topic", Webhook: base + "/hook"}
			if _, err := srv.Human().SetMyNotify(t.Context(), n); err != nil {
				t.Fatalf("set: %v (a public-looking name passes when set)", err)
			}
			a := askDecision(t, srv.Agent("s1"), "Which day?")
			for _, typ := range []askd.ChannelType{askd.NotifyNtfy, askd.NotifyWebhook} {
				key := askd.PersonNotifyKey(a, srv.HumanName, typ)
				var d *askd.Delivery
				testserver.Eventually(t, key+" finished", func() bool {
					err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
						d, err = tx.Deliveries.Delivery(t.Context(), key)
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
					return d.Status != askd.DeliveryPending
				})
				const rule = "refused to connect to 127.0.0.1: loopback address; agents' and people's webhooks never reach it"
				switch {
				case tt.delivered && d.Status != askd.DeliverySent:
					t.Errorf("%s: %+v, want sent", key, d)
				case !tt.delivered && (d.Status != askd.DeliveryFailed || d.Attempts != 1 || !strings.Contains(d.LastError, rule)):
					t.Errorf("%s: %+v, want failed at once saying %q", key, d, rule)
				}
			}
			want := 0
			if tt.delivered {
				want = 2
			}
			if n := len(rcv.got()); n != want {
				t.Errorf("the receiver on 127.0.0.1 got %d requests, want %d", n, want)
			}
		})
	}
}

// TestWebhookRedirectIsNotFollowed: an allowed receiver that redirects to a
// loopback URL gets its one request; the redirect is not followed.
func TestWebhookRedirectIsNotFollowed(t *testing.T) {
	target := newReceiver(t, nil)
	var hops atomic.Int32
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hops.Add(1)
		http.Redirect(w, r, target.URL+"/api/asks", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	srv := start(t, app.Config{TellAttempts: 1, WebhookAllow: loopback})
	agent := srv.Agent("s1")
	if _, err := agent.SetChannel(t.Context(), "s1", askd.Channel{Type: askd.ChannelWebhook, URL: redirector.URL, Secret: "k"}); err != nil {
		t.Fatal(err)
	}
	a := askDecision(t, agent, "Which day?")
	if _, err := srv.Human().Answer(t.Context(), a.ID, &askd.Answer{Answer: "Monday"}); err != nil {
		t.Fatal(err)
	}
	testserver.Eventually(t, "the failure", func() bool { return count(history(t, srv, a.ID), askd.ActionTellFail) == 1 })
	if d := delivery(t, srv, a.ID); !strings.Contains(d.LastError, "HTTP 307") {
		t.Errorf("delivery %+v, want the 307 as its error", d)
	}
	if n := len(target.got()); n != 0 || hops.Load() != 1 {
		t.Errorf("redirect target got %d requests, redirector %d; want 0 and 1", n, hops.Load())
	}
}
