package install

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/askd-dev/askd/internal/tomledit"
)

// Gating a server of Codex's config.toml: the server is a [mcp_servers.KEY]
// table (with any [mcp_servers.KEY.*] tables right below it); its lines are
// rewritten one by one, each line install does not change kept as it was
// (comments too), and every byte outside the table stays. The result is
// decoded and compared with the original before anything is written.
//
// Codex expands no variable in a value: env_vars names the variables it
// passes from its own environment to the server (codex mcp get --json shows
// them as the transport's env_vars).

// codexTable is where a server's tables stand: the items of the table and
// of the tables below it, and their bytes.
type codexTable struct {
	first, last int // item indexes: the table's header, and the last item of the last table
	start, end  int
}

// findCodexEntry returns key's tables in config data, its decoded entry and
// the decoded document, or an error naming what is missing or written in a
// form install does not rewrite.
func findCodexEntry(path string, data []byte, key string) ([]tomledit.Item, codexTable, map[string]any, error) {
	var t codexTable
	doc, err := tomledit.Decode(data)
	if err != nil {
		return nil, t, nil, fmt.Errorf("%s does not parse as Codex reads it: %v", path, err)
	}
	items, err := tomledit.Parse(data)
	if err != nil {
		return nil, t, nil, fmt.Errorf("%s: %v", path, err)
	}
	servers, ok := mapAt(doc, "mcp_servers")
	if !ok {
		return nil, t, nil, fmt.Errorf("%s has no [mcp_servers] tables: no server to gate", path)
	}
	entry, ok := servers[key].(map[string]any)
	if !ok {
		keys := slices.Sorted(maps.Keys(servers))
		if _, there := servers[key]; there {
			return nil, t, nil, fmt.Errorf("%s: mcp_servers.%s is not a table", path, key)
		}
		return nil, t, nil, fmt.Errorf("%s: no server %q; the servers there: %s", path, key, strings.Join(keys, ", "))
	}
	prefix := []string{"mcp_servers", key}
	sections := tomledit.Sections(items)
	var own []int // indexes into sections
	for i, s := range sections {
		if tomledit.HasPrefix(items[s.Header].Path, prefix) {
			own = append(own, i)
		}
	}
	inline := slices.IndexFunc(items, func(it tomledit.Item) bool {
		return it.Kind == tomledit.KeyValue && (tomledit.HasPrefix(it.Path, prefix) && !inSections(items, sections, own, it) || len(it.Path) < len(prefix) && tomledit.HasPrefix(prefix, it.Path))
	})
	switch {
	case inline >= 0:
		it := items[inline]
		return nil, t, nil, fmt.Errorf("%s: line %d: server %q is written inline (%s); install rewrites only a [mcp_servers.%s] table: write it as one, then run again",
			path, tomledit.LineOf(data, it.Start), key, firstLine(it.Raw), key)
	case len(own) == 0 || items[sections[own[0]].Header].Kind != tomledit.Table || len(items[sections[own[0]].Header].Path) != 2:
		return nil, t, nil, fmt.Errorf("%s: server %q has no [mcp_servers.%s] table before its other tables; write it as one, then run again", path, key, key)
	case own[len(own)-1]-own[0] != len(own)-1:
		return nil, t, nil, fmt.Errorf("%s: server %q's tables are apart, other tables between them; put them together, then run again", path, key)
	}
	t.first, t.last = sections[own[0]].Header, sections[own[len(own)-1]].Last
	t.start, t.end = items[t.first].Start, items[t.last].End
	return items, t, entry, nil
}

// inSections reports whether item it belongs to one of the sections own.
func inSections(items []tomledit.Item, sections []tomledit.Section, own []int, it tomledit.Item) bool {
	for _, i := range own {
		s := sections[i]
		if it.Start >= items[s.Header].Start && it.End <= items[s.Last].End {
			return true
		}
	}
	return false
}

// codexRefused are keys of a URL entry whose sign-in the gate cannot do:
// it sends only the headers its command line gives it, and Codex would no
// longer send these.
var codexRefused = []string{"bearer_token_env_var", "env_http_headers", "http_headers_helper", "oauth", "oauth_resource", "scopes"}

// codexUpstream reads the server a Codex entry runs or reaches, or says why
// the gate cannot stand in front of it.
func codexUpstream(entry map[string]any) (upstream, error) {
	var up upstream
	command, hasCommand := entry["command"]
	rawURL, hasURL := entry["url"]
	args, err := tomlStrings(entry, "args")
	if err != nil {
		return up, err
	}
	if s, ok := command.(string); ok && isGate(s, args) {
		return up, &alreadyGated{s, args}
	}
	if env, ok := entry["env"]; ok {
		if _, isTable := env.(map[string]any); !isTable {
			return up, errors.New("its env is not a table")
		}
	}
	if env, ok := entry["env"].(map[string]any); ok {
		for _, k := range askdEnv {
			if _, set := env[k]; set {
				return up, fmt.Errorf("its env sets %s, which the gate would read as its own (and never pass to the server): take it out, then run again", k)
			}
		}
	}
	if _, err := tomlStrings(entry, "env_vars"); err != nil {
		return up, err
	}
	switch {
	case hasCommand && hasURL:
		return up, errors.New("it has both a command and a url: keep one, then run again")
	case hasCommand:
		s, ok := command.(string)
		if !ok || s == "" {
			return up, errors.New("its command is not a string, or empty")
		}
		up.command = append([]string{s}, args...)
		return up, nil
	case !hasURL:
		return up, errors.New("it has no command and no url: not an entry the gate can run")
	}
	return codexURLUpstream(entry, rawURL)
}

// codexURLUpstream reads a url entry: a streamable HTTP server the gate
// reaches with the entry's http_headers, and no sign-in of Codex's.
func codexURLUpstream(entry map[string]any, rawURL any) (upstream, error) {
	var up upstream
	up.url, _ = rawURL.(string)
	if !strings.HasPrefix(up.url, "http://") && !strings.HasPrefix(up.url, "https://") {
		return up, fmt.Errorf("its url %v is not an http:// or https:// URL, which is all the gate reaches", rawURL)
	}
	for _, k := range codexRefused {
		if _, ok := entry[k]; ok {
			return up, fmt.Errorf("it signs in with %s, which the gate cannot do for it (it sends only the headers on its command line, and askd writes no secret into the file)", k)
		}
	}
	if h, ok := entry["http_headers"]; ok {
		headers, ok := h.(map[string]any)
		if !ok {
			return up, errors.New("its http_headers is not a table")
		}
		for _, k := range slices.Sorted(maps.Keys(headers)) {
			v, ok := headers[k].(string)
			if !ok || strings.ContainsAny(k, " \t\r\n:") || strings.ContainsAny(v, "\r\n") {
				return up, fmt.Errorf("its header %q cannot go on the gate's command line as 'Name: value'", k)
			}
			up.headers = append(up.headers, k+": "+v)
		}
	}
	return up, nil
}

func tomlStrings(entry map[string]any, key string) ([]string, error) {
	raw, ok := entry[key]
	if !ok {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("its %s is not an array", key)
	}
	out := make([]string, 0, len(list))
	for _, v := range list {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("its %s holds %v, not only strings", key, v)
		}
		out = append(out, s)
	}
	return out, nil
}

// gateCodex returns key's tables in data rewritten to run the gate.
func gateCodex(c *mcpClient, path string, data []byte, g gateSpec, url string) (*gatedEntry, error) {
	key := g.key
	items, t, entry, err := findCodexEntry(path, data, key)
	if err != nil {
		return nil, err
	}
	up, err := codexUpstream(entry)
	var ag *alreadyGated
	if errors.As(err, &ag) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: server %q: %v", path, key, err)
	}
	args := g.args(up)
	had, _ := tomlStrings(entry, "env_vars")
	envVars := slices.Clone(had)
	for _, r := range refsFor(c, g, url) {
		if !slices.Contains(envVars, r[1]) {
			envVars = append(envVars, r[1])
		}
	}
	text := codexTableText(data, items, t, key, codexLines{
		command: tomledit.Quote(g.askd), args: tomledit.QuoteList(args), envVars: tomledit.QuoteList(envVars),
		addEnvVars: len(envVars) > len(had), addTimeout: entry[c.timeoutKey] == nil, timeout: c.timeoutKey + " = " + strconv.Itoa(c.timeoutValue),
		addApprove: entry[c.approveKey] == nil, approve: c.approveKey + " = " + tomledit.Quote(c.approveValue.(string)),
	})
	e := &gatedEntry{start: t.start, end: t.end, text: text, upstream: up, argv: append([]string{g.askd}, args...),
		added: addedKeys(c, func(k string) bool { return entry[k] != nil })}

	// What Codex will read: the entry as it was, but for these keys.
	want := maps.Clone(entry)
	delete(want, "url")
	delete(want, "http_headers")
	want["command"] = g.askd
	want["args"] = anyList(args)
	if len(envVars) > len(had) {
		want["env_vars"] = anyList(envVars)
	}
	if want[c.timeoutKey] == nil {
		want[c.timeoutKey] = int64(c.timeoutValue)
	}
	if want[c.approveKey] == nil {
		want[c.approveKey] = c.approveValue
	}
	if err := checkCodexEdit(data, e.apply(data), key, want); err != nil {
		return nil, fmt.Errorf("%s: %v; nothing was changed", path, err)
	}
	return e, nil
}

func anyList(list []string) []any {
	out := make([]any, len(list))
	for i, s := range list {
		out[i] = s
	}
	return out
}

// codexLines are the values install writes into a gated table, as TOML.
type codexLines struct {
	command, args, envVars string
	addEnvVars             bool   // env_vars has names to add
	addTimeout, addApprove bool   // the table has no timeout, no approval mode
	timeout, approve       string // their lines, key = value
}

// codexTableText is the tables t of data with the server's lines rewritten:
// command (or url) becomes command and args, with env_vars and the timeout
// after them when the table had none; args, http_headers (a key or a table)
// go; env_vars is merged in place; every other line stays as it was.
func codexTableText(data []byte, items []tomledit.Item, t codexTable, key string, v codexLines) string {
	newline := "\n"
	if bytes.Contains(data, []byte("\r\n")) {
		newline = "\r\n"
	}
	table := []string{"mcp_servers", key}
	has := func(k string) bool {
		return slices.ContainsFunc(items[t.first:t.last+1], func(it tomledit.Item) bool {
			return it.Kind == tomledit.KeyValue && slices.Equal(it.Path, append(slices.Clone(table), k))
		})
	}
	hasEnvVars := has("env_vars")
	var out strings.Builder
	pos, dropping := t.start, false
	for _, it := range items[t.first : t.last+1] {
		out.Write(data[pos:it.Start])
		pos = it.End
		raw := data[it.Start:it.End]
		lead := string(raw[:len(raw)-len(bytes.TrimLeft(raw, " \t"))])
		line := func(s string) { out.WriteString(lead + s + newline) }
		if it.Header() {
			dropping = tomledit.HasPrefix(it.Path, append(slices.Clone(table), "http_headers"))
		}
		rel := []string{}
		if tomledit.HasPrefix(it.Path, table) {
			rel = it.Path[2:]
		}
		switch {
		case dropping:
		case it.Header() || it.Kind == tomledit.Comment:
			out.Write(data[it.Start:it.End])
		case len(rel) == 1 && (rel[0] == "command" || rel[0] == "url"):
			line("command = " + v.command)
			line("args = " + v.args)
			if v.addEnvVars && !hasEnvVars {
				line("env_vars = " + v.envVars)
			}
			if v.addTimeout {
				line(v.timeout)
			}
			if v.addApprove {
				line(v.approve)
			}
		case len(rel) == 1 && rel[0] == "args", len(rel) > 0 && rel[0] == "http_headers":
		case len(rel) == 1 && rel[0] == "env_vars" && v.addEnvVars:
			line("env_vars = " + v.envVars)
		default:
			out.Write(data[it.Start:it.End])
		}
	}
	out.Write(data[pos:t.end])
	return out.String()
}

// checkCodexEdit decodes the edited file and checks that it holds what the
// original held, but for key's entry, which must read as want.
func checkCodexEdit(before, after []byte, key string, want map[string]any) error {
	a, err := tomledit.Decode(after)
	if err != nil {
		return fmt.Errorf("the edited file would not parse (%v)", err)
	}
	b, _ := tomledit.Decode(before)
	as, _ := mapAt(a, "mcp_servers")
	bs, _ := mapAt(b, "mcp_servers")
	if !reflect.DeepEqual(as[key], want) {
		return fmt.Errorf("the edited file would not hold the gated entry as written (%v, want %v)", as[key], want)
	}
	delete(as, key)
	delete(bs, key)
	if !reflect.DeepEqual(a, b) {
		return errors.New("editing the file would change more than the entry")
	}
	return nil
}

// findCodexSpan returns where key's tables stand and whether the server
// runs the gate, for --undo.
func findCodexSpan(path string, data []byte, key string) (start, end int, gated bool, err error) {
	_, t, entry, err := findCodexEntry(path, data, key)
	if err != nil {
		return 0, 0, false, err
	}
	command, _ := entry["command"].(string)
	args, _ := tomlStrings(entry, "args")
	return t.start, t.end, isGate(command, args), nil
}
