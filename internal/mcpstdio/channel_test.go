package mcpstdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/mcpserver"
	"github.com/askd-dev/askd/internal/testserver"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testserver.RemoveBinary()
	os.Exit(code)
}

// channelServer starts a real askd (SQLite file, HTTP on 127.0.0.1:0, its
// MCP endpoint) on clk, which the test moves on: leases are what it tests.
func channelServer(t *testing.T, clk *testserver.Clock) *testserver.Server {
	t.Helper()
	return testserver.Start(t, testserver.Options{
		Config: app.Config{Now: clk.Now},
		MCP:    func(svc *app.Service) http.Handler { return mcpserver.Handler(svc, mcpserver.Options{}) },
	})
}

// bridgeProc is a real `askd mcp --channel` process with the go-sdk client
// on its stdin and stdout, as Claude Code runs it. Every line the bridge
// writes is kept as written; Claude Code's channel notifications (which the
// SDK does not know) go to channel instead of the client.
type bridgeProc struct {
	cmd     *exec.Cmd
	cs      *mcp.ClientSession
	conn    mcp.Connection // the client's, to send what the SDK cannot
	channel chan string    // raw lines of notifications/claude/channel*
	mu      sync.Mutex
	lines   []string // every line, raw
}

// tapTransport is an IOTransport that keeps the connection it makes.
type tapTransport struct {
	mcp.IOTransport
	conn mcp.Connection
}

func (t *tapTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.IOTransport.Connect(ctx)
	t.conn = c
	return c, err
}

func startBridge(t *testing.T, srv *testserver.Server, token, session string) *bridgeProc {
	t.Helper()
	cmd := exec.Command(testserver.Binary(t), "mcp", "--channel")
	cmd.Env = append(os.Environ(), "ASKD_URL="+srv.URL, "ASKD_TOKEN="+token, "ASKD_SESSION="+session, "ASKD_LOG_LEVEL=debug")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr testserver.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &bridgeProc{cmd: cmd, channel: make(chan string, 16)}
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGCONT)
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("askd mcp stderr:\n%s", stderr.String())
		}
	})
	toClient, fromBridge := io.Pipe()
	go func() {
		defer fromBridge.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.lines = append(p.lines, line)
			p.mu.Unlock()
			if strings.Contains(line, `"method":"notifications/claude/channel`) {
				p.channel <- line
				continue
			}
			if _, err := io.WriteString(fromBridge, line+"\n"); err != nil {
				return
			}
		}
	}()
	tr := &tapTransport{IOTransport: mcp.IOTransport{Reader: toClient, Writer: stdin}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p.cs, err = mcp.NewClient(&mcp.Implementation{Name: "claude-code-test", Version: "1"}, nil).Connect(ctx, tr, nil)
	if err != nil {
		t.Fatalf("connect to askd mcp: %v\n%s", err, stderr.String())
	}
	p.conn = tr.conn
	// Claude Code lists the tools before it listens to the channel; the
	// bridge pushes nothing before.
	if _, err := p.cs.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	return p
}

// next returns the next channel notification the bridge wrote, raw.
func (p *bridgeProc) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-p.channel:
		return l
	case <-time.After(60 * time.Second):
		t.Fatal("no channel notification from askd mcp")
		return ""
	}
}

// none fails the test if a channel notification is waiting.
func (p *bridgeProc) none(t *testing.T, what string) {
	t.Helper()
	select {
	case l := <-p.channel:
		t.Errorf("%s: another channel notification: %s", what, l)
	default:
	}
}

// notify sends a notification as Claude Code does, params as raw JSON.
func (p *bridgeProc) notify(t *testing.T, method, params string) {
	t.Helper()
	if err := p.conn.Write(t.Context(), &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}); err != nil {
		t.Fatalf("send %s: %v", method, err)
	}
}

// waitAttached waits until a bridge of the server's agent is attached to
// session (its lease recorded).
func waitAttached(t *testing.T, srv *testserver.Server, agent, session string) {
	t.Helper()
	testserver.Eventually(t, "a bridge attached to "+session, func() bool {
		var until time.Time
		_ = srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			until, err = tx.Channels.BridgeUntil(t.Context(), agent, session)
			return err
		})
		return !until.IsZero()
	})
}

// decisionAsk asks an attention ask through the bridge and returns its id.
func decisionAsk(t *testing.T, p *bridgeProc, title string) int64 {
	t.Helper()
	res, err := p.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{
		"kind": "decision", "title": title, "options": []map[string]any{{"label": "Monday"}, {"label": "Friday"}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("ask: %v %+v", err, res)
	}
	var out struct{ ID int64 }
	if err := json.Unmarshal(mustMarshal(t, res.StructuredContent), &out); err != nil || out.ID == 0 {
		t.Fatalf("ask returned %+v", res.StructuredContent)
	}
	return out.ID
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stopHook calls the session's Stop hook as Claude Code's does and returns
// its reply.
func stopHook(t *testing.T, srv *testserver.Server, session string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/hooks/claude", strings.NewReader(`{"session_id":"cc-1","hook_event_name":"Stop","stop_hook_active":false}`))
	req.Header.Set("Authorization", "Bearer "+srv.AgentToken)
	req.Header.Set("Askd-Session", session)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("Stop hook: %s %s", resp.Status, body)
	}
	return strings.TrimSpace(string(body))
}

// toldEvents returns the told events of ask id.
func toldEvents(t *testing.T, srv *testserver.Server, id int64) []*askd.Event {
	t.Helper()
	a, err := srv.Human().Show(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	var out []*askd.Event
	for _, e := range a.History {
		if e.Action == askd.ActionTold {
			out = append(out, e)
		}
	}
	return out
}

// jsonString is s as a JSON string, as the bridge writes it (no HTML
// escaping).
func jsonString(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(b.String())
}

// TestChannelTellsAnswer: askd mcp --channel declares both channel
// capabilities; an attention ask answered in the inbox arrives as one
// notifications/claude/channel, byte for byte the told text and meta; it is
// then told (by channel), and the Stop hook has nothing left to tell.
func TestChannelTellsAnswer(t *testing.T) {
	clk := &testserver.Clock{}
	srv := channelServer(t, clk)
	const session = "cc-run"
	p := startBridge(t, srv, srv.AgentToken, session)

	caps := p.cs.InitializeResult().Capabilities
	for _, k := range []string{"claude/channel", "claude/channel/permission"} {
		if v, ok := caps.Experimental[k]; !ok || fmt.Sprint(v) != "map[]" {
			t.Errorf("capabilities.experimental[%q] = %v (%v), want {}", k, v, ok)
		}
	}
	p.mu.Lock()
	initLine := p.lines[0]
	p.mu.Unlock()
	if want := `"experimental":{"claude/channel":{},"claude/channel/permission":{}}`; !strings.Contains(initLine, want) {
		t.Errorf("initialize result %s\nlacks %s", initLine, want)
	}
	// The bridge declares what askd's own MCP server does (mcpserver.Capabilities),
	// so a client reads the same capabilities over stdio as over HTTP.
	if want := `"logging":{},"prompts":{},"resources":{},"tools":{}`; !strings.Contains(initLine, want) || strings.Contains(initLine, "listChanged") {
		t.Errorf("initialize result %s\nlacks %s, or declares listChanged", initLine, want)
	}

	waitAttached(t, srv, srv.AgentName, session)
	id := decisionAsk(t, p, `Deploy on "Monday" <or> Friday?`)
	answeredAt := time.Now()
	if _, err := srv.Human().Answer(t.Context(), id, &askd.Answer{Answer: "Monday & not later"}); err != nil {
		t.Fatal(err)
	}
	got := p.next(t)
	t.Logf("answer to channel notification on stdout: %v", time.Since(answeredAt))
	text := fmt.Sprintf(`The user answered your ask #%d (decision: "Deploy on \"Monday\" <or> Friday?"): Monday & not later`, id)
	want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/claude/channel","params":{"content":%s,"meta":{"ask_id":"%d","kind":"decision","outcome":"answered"}}}`, jsonString(t, text), id)
	if got != want {
		t.Fatalf("channel notification\n got %s\nwant %s", got, want)
	}
	testserver.Eventually(t, "the ask told by channel", func() bool { return len(toldEvents(t, srv, id)) > 0 })
	told := toldEvents(t, srv, id)
	if len(told) != 1 || told[0].Note != "by channel" || told[0].Actor != srv.AgentName {
		t.Fatalf("told events %+v, want one, by channel, by %s", told, srv.AgentName)
	}
	if reply := stopHook(t, srv, session); reply != "{}" {
		t.Fatalf("Stop hook after the channel told it: %s, want {}", reply)
	}
	if told := toldEvents(t, srv, id); len(told) != 1 {
		t.Fatalf("told %d times, want once", len(told))
	}
	p.none(t, "after the Stop hook")
}

// TestChannelBridgeDiesBeforeWriting: a bridge that is leased a told text
// and dies before writing it leaves it to the next bridge, which delivers it
// once its lease is over; meanwhile the Stop hook leaves it alone, and with
// no bridge attached it is the Stop hook's.
func TestChannelBridgeDiesBeforeWriting(t *testing.T) {
	clk := &testserver.Clock{}
	srv := channelServer(t, clk)
	const session = "cc-crash"
	first := startBridge(t, srv, srv.AgentToken, session)
	waitAttached(t, srv, srv.AgentName, session)
	id := decisionAsk(t, first, "Ship it?")

	// Frozen, it still holds its stream: askd leases it the text, which
	// it can never write.
	if err := first.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	a, err := srv.Human().Answer(t.Context(), id, &askd.Answer{Answer: "Friday"})
	if err != nil {
		t.Fatal(err)
	}
	key := askd.TellKey(a)
	delivery := func() *askd.Delivery {
		var d *askd.Delivery
		if err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			d, err = tx.Deliveries.Delivery(t.Context(), key)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	testserver.Eventually(t, "the frozen bridge leased the text", func() bool { return delivery().ClaimedUntil != nil })
	if d := delivery(); d.Channel.Type != askd.ChannelBridge || d.Attempts != 1 {
		t.Fatalf("delivery %+v, want a bridge's, claimed once", d)
	}
	if reply := stopHook(t, srv, session); reply != "{}" {
		t.Fatalf("Stop hook while a bridge holds the lease: %s, want {}", reply)
	}
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.cmd.Wait()

	clk.Skip(app.TellLease + time.Second) // the dead bridge's lease is over
	second := startBridge(t, srv, srv.AgentToken, session)
	got := second.next(t)
	text := fmt.Sprintf(`The user answered your ask #%d (decision: "Ship it?"): Friday`, id)
	want := fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/claude/channel","params":{"content":%s,"meta":{"ask_id":"%d","kind":"decision","outcome":"answered"}}}`, jsonString(t, text), id)
	if got != want {
		t.Fatalf("channel notification from the new bridge\n got %s\nwant %s", got, want)
	}
	testserver.Eventually(t, "the ask told", func() bool { return len(toldEvents(t, srv, id)) > 0 })
	if told := toldEvents(t, srv, id); len(told) != 1 || told[0].Note != "by channel" {
		t.Fatalf("told events %+v, want one, by channel", told)
	}
	if d := delivery(); d.Status != askd.DeliverySent || d.Attempts != 2 {
		t.Fatalf("delivery %+v, want sent after 2 claims", d)
	}
	first.none(t, "the bridge that died")
	if reply := stopHook(t, srv, session); reply != "{}" {
		t.Fatalf("Stop hook after the channel told it: %s, want {}", reply)
	}

	// With no bridge attached, the Stop hook tells.
	if err := second.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	second.cmd.Wait()
	clk.Skip(app.BridgeLease + time.Second)
	b, err := srv.Agent(session).Create(t.Context(), &askd.AskInput{Kind: askd.KindReady, Title: "Ready for review"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srv.Human().Answer(t.Context(), b.ID, &askd.Answer{Answer: "Looks good"}); err != nil {
		t.Fatal(err)
	}
	wantStop := fmt.Sprintf(`{"decision":"block","reason":%s}`, jsonString(t, fmt.Sprintf(`The user answered your ask #%d (ready: "Ready for review"): Looks good`, b.ID)))
	if reply := stopHook(t, srv, session); reply != wantStop {
		t.Fatalf("Stop hook with no bridge attached:\n got %s\nwant %s", reply, wantStop)
	}
}

// TestChannelPermissionRelay: a permission_request becomes a card; the
// person's allow arrives as notifications/claude/channel/permission with
// the same request_id, byte for byte; a newer request closes the earlier
// card as answered in the terminal; an edited input is refused; a rule
// answers at once.
func TestChannelPermissionRelay(t *testing.T) {
	clk := &testserver.Clock{}
	srv := channelServer(t, clk)
	const session = "cc-perm"
	p := startBridge(t, srv, srv.AgentToken, session)
	waitAttached(t, srv, srv.AgentName, session)

	p.notify(t, "notifications/claude/channel/permission_request",
		`{"request_id":"abcde","tool_name":"Bash","description":"List the files","input_preview":"{\"command\":\"ls -la\",\"description\":\"List the files\"}"}`)
	card := srv.Pending(t, session, 1)[0]
	if card.Kind != askd.KindApproval || card.ToolName != "Bash" || card.ToolUseID != "channel:abcde" || card.Title != "Allow Bash: ls -la" || card.Details != "List the files" || card.Deadline == nil {
		t.Fatalf("card %+v", card)
	}
	if !card.Deadline.Equal(card.CreatedAt.Add(app.DefaultConfig().ApprovalTimeout)) {
		t.Errorf("deadline %v, want the approval timeout after %v", card.Deadline, card.CreatedAt)
	}
	_, err := srv.Human().Answer(t.Context(), card.ID, &askd.Answer{Decision: askd.DecisionModified, Payload: json.RawMessage(`{"command":"ls"}`)})
	if askd.ErrorCode(err) != askd.EMISMATCH || !strings.Contains(err.Error(), "decision: modified is not possible") {
		t.Fatalf("an edited input: %v, want EMISMATCH naming decision", err)
	}
	if _, err := srv.Human().Answer(t.Context(), card.ID, &askd.Answer{Decision: askd.DecisionApproved}); err != nil {
		t.Fatal(err)
	}
	if got, want := p.next(t), `{"jsonrpc":"2.0","method":"notifications/claude/channel/permission","params":{"request_id":"abcde","behavior":"allow"}}`; got != want {
		t.Fatalf("permission notification\n got %s\nwant %s", got, want)
	}

	// A prompt answered in the terminal: the next one closes its card.
	p.notify(t, "notifications/claude/channel/permission_request",
		`{"request_id":"fghij","tool_name":"Write","description":"Write a file","input_preview":"{\"file_path\":\"/srv/app/notes.txt\",\"content\":\"`+strings.Repeat("x", 150)+`…"}`)
	first := srv.Pending(t, session, 1)[0]
	if first.ToolUseID != "channel:fghij" || first.Payload != nil || !strings.Contains(first.Details, "cut at 200 characters") {
		t.Fatalf("a card of a cut preview: %+v", first)
	}
	p.notify(t, "notifications/claude/channel/permission_request",
		`{"request_id":"kmnop","tool_name":"Bash","description":"Run the tests","input_preview":"{\"command\":\"make test\"}"}`)
	testserver.Eventually(t, "the earlier card closed", func() bool {
		a, err := srv.Human().Show(t.Context(), first.ID)
		return err == nil && !a.Pending()
	})
	closed, err := srv.Human().Show(t.Context(), first.ID)
	if err != nil {
		t.Fatal(err)
	}
	if closed.CancelReason != askd.ReasonWithdrawn || closed.Answer == nil || closed.Answer.Response != "answered in the terminal" {
		t.Fatalf("the earlier card: %s/%s %+v, want withdrawn, answered in the terminal", closed.Status, closed.CancelReason, closed.Answer)
	}
	second := srv.Pending(t, session, 1)[0]
	if second.ToolUseID != "channel:kmnop" {
		t.Fatalf("pending card %+v, want the newer prompt's", second)
	}
	// The person rejects it, and makes a rule that always allows Bash.
	if _, err := srv.Human().Answer(t.Context(), second.ID, &askd.Answer{Decision: askd.DecisionRejected}); err != nil {
		t.Fatal(err)
	}
	if got, want := p.next(t), `{"jsonrpc":"2.0","method":"notifications/claude/channel/permission","params":{"request_id":"kmnop","behavior":"deny"}}`; got != want {
		t.Fatalf("permission notification\n got %s\nwant %s", got, want)
	}
	if _, err := srv.Human().CreateRule(t.Context(), &askd.RuleInput{AskID: second.ID, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}); err != nil {
		t.Fatal(err)
	}
	p.notify(t, "notifications/claude/channel/permission_request",
		`{"request_id":"qrstu","tool_name":"Bash","description":"Build","input_preview":"{\"command\":\"go build ./...\"}"}`)
	if got, want := p.next(t), `{"jsonrpc":"2.0","method":"notifications/claude/channel/permission","params":{"request_id":"qrstu","behavior":"allow"}}`; got != want {
		t.Fatalf("permission notification of a rule\n got %s\nwant %s", got, want)
	}

	// The session's Stop hook: the turn is over, its prompts were answered.
	p.notify(t, "notifications/claude/channel/permission_request",
		`{"request_id":"vwxyz","tool_name":"Edit","description":"Edit","input_preview":"{\"file_path\":\"/srv/app/a.go\"}"}`)
	last := srv.Pending(t, session, 1)[0]
	if reply := stopHook(t, srv, session); reply != "{}" {
		t.Fatalf("Stop hook: %s", reply)
	}
	if a, err := srv.Human().Show(t.Context(), last.ID); err != nil || a.CancelReason != askd.ReasonWithdrawn || a.Answer.Response != "answered in the terminal" {
		t.Fatalf("card after the Stop hook: %+v %v", a, err)
	}
}
