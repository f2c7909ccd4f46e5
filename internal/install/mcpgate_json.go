package install

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/askd-dev/askd/internal/jsonedit"
)

// Gating an entry of a JSON config (Claude Desktop, Cursor, Claude Code,
// Gemini CLI, VS Code): the entry's value is found in the text
// (jsonedit.Parse, in the syntax the client reads) and replaced by the
// gated entry, written in the entry's own layout; every byte outside it
// stays as it was. The result is parsed back, as the client would, and
// compared with the original before anything is written.

// jsonEntry is where a server's entry stands in a JSON config.
type jsonEntry struct {
	node  *jsonedit.Node
	value *jsonedit.Object
}

// findJSONEntry returns key's entry in the servers map of the config data,
// or an error naming what is missing: the map, or the key (listing those
// there are).
func findJSONEntry(c *mcpClient, path string, data []byte, key string) (*jsonedit.Node, jsonEntry, error) {
	root, err := jsonedit.Parse(data, c.syntax)
	if err != nil {
		return nil, jsonEntry{}, fmt.Errorf("%s does not parse as %s reads it: %v", path, c.name, err)
	}
	if !root.IsObject() {
		return nil, jsonEntry{}, fmt.Errorf("%s holds no JSON object", path)
	}
	servers, n := root.Lookup(c.servers)
	switch {
	case n == 0:
		return nil, jsonEntry{}, fmt.Errorf("%s has no %q map: no server to gate", path, c.servers)
	case n > 1:
		return nil, jsonEntry{}, fmt.Errorf("%s has %q %d times (the client reads only the last): keep one, then run again", path, c.servers, n)
	case !servers.IsObject():
		return nil, jsonEntry{}, fmt.Errorf("%s: %q is not an object", path, c.servers)
	}
	node, n := servers.Lookup(key)
	switch {
	case n == 0:
		keys := servers.Keys()
		if len(keys) == 0 {
			return nil, jsonEntry{}, fmt.Errorf("%s: no server %q; its %q map is empty", path, key, c.servers)
		}
		return nil, jsonEntry{}, fmt.Errorf("%s: no server %q; the servers there: %s", path, key, strings.Join(keys, ", "))
	case n > 1:
		return nil, jsonEntry{}, fmt.Errorf("%s: server %q is there %d times (the client reads only the last): keep one, then run again", path, key, n)
	case !node.IsObject():
		return nil, jsonEntry{}, fmt.Errorf("%s: server %q is not an object", path, key)
	}
	return root, jsonEntry{node: node, value: node.Value().(*jsonedit.Object)}, nil
}

// gateJSON returns the gated entry of key in data, in place of its value.
func gateJSON(c *mcpClient, path string, data []byte, g gateSpec, url string) (*gatedEntry, error) {
	key := g.key
	_, entry, err := findJSONEntry(c, path, data, key)
	if err != nil {
		return nil, err
	}
	up, err := jsonUpstream(c, entry.value)
	var ag *alreadyGated
	if errors.As(err, &ag) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("%s: server %q: %v", path, key, err)
	}
	args := g.args(up)
	gated := gatedJSONEntry(c, entry.value, up, g.askd, args, refsFor(c, g, url))
	text, err := encodeInPlace(data, entry.node, gated)
	if err != nil {
		return nil, err
	}
	e := &gatedEntry{start: entry.node.Start, end: entry.node.End, text: text, upstream: up, argv: append([]string{g.askd}, args...),
		added: addedKeys(c, func(k string) bool { _, ok := entry.value.Get(k); return ok })}
	if err := checkJSONEdit(c, data, e.apply(data), key, gated); err != nil {
		return nil, fmt.Errorf("%s: %v; nothing was changed", path, err)
	}
	return e, nil
}

// jsonUpstream reads the server an entry runs or reaches, or says why the
// gate cannot stand in front of it.
func jsonUpstream(c *mcpClient, entry *jsonedit.Object) (upstream, error) {
	if command, args := entryCommand(entry); isGate(command, args) {
		return upstream{}, &alreadyGated{command, args}
	}
	command, hasCommand, err := stringAt(entry, "command")
	if err != nil {
		return upstream{}, err
	}
	var urlKey string
	for _, k := range c.urlKeys {
		if _, ok := entry.Get(k); ok {
			if urlKey != "" {
				return upstream{}, fmt.Errorf("it has both %q and %q: keep the one the client should use, then run again", urlKey, k)
			}
			urlKey = k
		}
	}
	typ, _, err := stringAt(entry, "type")
	if err != nil {
		return upstream{}, err
	}
	if _, err := stringMap(entry, "env"); err != nil {
		return upstream{}, err
	}
	if err := refuseAskdEnv(entry); err != nil {
		return upstream{}, err
	}
	switch {
	case hasCommand && urlKey != "":
		return upstream{}, fmt.Errorf("it has both a command and a %q: keep one, then run again", urlKey)
	case hasCommand && command == "":
		return upstream{}, errors.New("its command is empty")
	case hasCommand && typ != "" && typ != "stdio":
		return upstream{}, fmt.Errorf("it has a command and type %q: a command entry's type is stdio", typ)
	case hasCommand:
		args, err := stringsAt(entry, "args")
		return upstream{command: append([]string{command}, args...)}, err
	case urlKey == "":
		return upstream{}, fmt.Errorf("it has no command and no %s: not an entry the gate can run", strings.Join(c.urlKeys, " or "))
	}
	return jsonURLUpstream(entry, urlKey, typ)
}

// jsonURLUpstream reads a URL entry: a streamable HTTP server the gate
// reaches with the entry's headers, and no sign-in of the client's.
func jsonURLUpstream(entry *jsonedit.Object, urlKey, typ string) (upstream, error) {
	var up upstream
	up.url, _, _ = stringAt(entry, urlKey)
	switch typ {
	case "", "http", "streamable-http", "streamableHttp":
	case "sse":
		return up, errors.New(`its type is "sse", the older HTTP+SSE transport; the gate speaks streamable HTTP to a remote server (give its streamable HTTP URL and type "http", or gate a command that runs it)`)
	default:
		return up, fmt.Errorf("its type is %q; the gate stands in front of a command or a streamable HTTP server", typ)
	}
	if !strings.HasPrefix(up.url, "http://") && !strings.HasPrefix(up.url, "https://") {
		return up, fmt.Errorf("its %s %q is not an http:// or https:// URL, which is all the gate reaches", urlKey, up.url)
	}
	for _, k := range []string{"oauth", "headersHelper", "authProviderType", "auth"} {
		if _, ok := entry.Get(k); ok {
			return up, fmt.Errorf("it signs in with %q, which the gate cannot do for it (it sends only the headers it is given)", k)
		}
	}
	headers, err := stringMap(entry, "headers")
	if err != nil {
		return up, err
	}
	for _, h := range headers {
		if strings.ContainsAny(h[0], " \t\r\n:") || strings.ContainsAny(h[1], "\r\n") {
			return up, fmt.Errorf("its header %q cannot go on the gate's command line as 'Name: value'", h[0])
		}
		up.headers = append(up.headers, h[0]+": "+h[1])
	}
	return up, nil
}

// stringAt is the string at key, whether the key is there, or an error if
// it holds something else.
func stringAt(o *jsonedit.Object, key string) (string, bool, error) {
	v, ok := o.Get(key)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, fmt.Errorf("its %q is not a string", key)
	}
	return s, true, nil
}

// entryCommand is an entry's command and args as far as they are strings.
func entryCommand(entry *jsonedit.Object) (string, []string) {
	command, _ := entry.Get("command")
	s, _ := command.(string)
	list, _ := stringsAt(entry, "args")
	return s, list
}

func stringsAt(o *jsonedit.Object, key string) ([]string, error) {
	raw, err := o.Array(key)
	if err != nil {
		return nil, fmt.Errorf("its %v", err)
	}
	list := make([]string, 0, len(raw))
	for _, v := range raw {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("its %q holds %v, not only strings", key, v)
		}
		list = append(list, s)
	}
	return list, nil
}

// stringMap is the object at key as name-value pairs in order (none if
// key is absent).
func stringMap(o *jsonedit.Object, key string) ([][2]string, error) {
	v, ok := o.Get(key)
	if !ok {
		return nil, nil
	}
	m, ok := v.(*jsonedit.Object)
	if !ok {
		return nil, fmt.Errorf("its %q is not an object", key)
	}
	var pairs [][2]string
	for _, k := range m.Keys() {
		val, _ := m.Get(k)
		s, ok := val.(string)
		if !ok {
			return nil, fmt.Errorf("its %q has %q not a string", key, k)
		}
		pairs = append(pairs, [2]string{k, s})
	}
	return pairs, nil
}

// refuseAskdEnv refuses an entry whose env sets a variable the gate reads
// as its own: the gate would take it, and never pass it to the server.
func refuseAskdEnv(entry *jsonedit.Object) error {
	v, _ := entry.Get("env")
	env, _ := v.(*jsonedit.Object)
	if env == nil {
		return nil
	}
	for _, k := range env.Keys() {
		if slices.Contains(askdEnv, k) {
			return fmt.Errorf("its env sets %s, which the gate would read as its own (and never pass to the server): take it out, then run again", k)
		}
	}
	return nil
}

// gatedJSONEntry is entry running the gate: its keys in their order, the
// command where the command or URL was (args and env after it when the
// entry had none), headers gone into the command line, env with refs
// added, every other key as it was.
func gatedJSONEntry(c *mcpClient, entry *jsonedit.Object, up upstream, command string, args []string, refs [][2]string) *jsonedit.Object {
	argv := anyList(args)
	var env *jsonedit.Object
	if v, ok := entry.Get("env"); ok {
		env, _ = v.(*jsonedit.Object)
	}
	if len(refs) > 0 {
		merged := jsonedit.NewObject()
		if env != nil {
			for _, k := range env.Keys() {
				v, _ := env.Get(k)
				merged.Set(k, v)
			}
		}
		for _, r := range refs {
			merged.Set(r[0], r[1])
		}
		env = merged
	}
	out := jsonedit.NewObject()
	_, hasEnv := entry.Get("env")
	placed := false
	for _, k := range entry.Keys() {
		v, _ := entry.Get(k)
		switch {
		case k == "type":
			if !c.dropType {
				out.Set("type", "stdio")
			}
		case k == "command" || up.url != "" && slices.Contains(c.urlKeys, k):
			if !placed {
				placed = true
				out.Set("command", command).Set("args", argv)
				if !hasEnv && env != nil {
					out.Set("env", env)
				}
			}
		case k == "args", k == "headers" && up.url != "":
			// On the command line now.
		case k == "env" && env != nil:
			out.Set("env", env)
		default:
			out.Set(k, v)
		}
	}
	if c.timeoutKey != "" {
		if _, ok := entry.Get(c.timeoutKey); !ok {
			out.Set(c.timeoutKey, json.Number(strconv.Itoa(c.timeoutValue)))
		}
	}
	if c.approveKey != "" {
		if _, ok := entry.Get(c.approveKey); !ok {
			out.Set(c.approveKey, c.approveValue)
		}
	}
	return out
}

// encodeInPlace writes entry to take node's place: over several lines
// indented as the line node starts on, with the file's indentation and
// line ends, or on one line if node was.
func encodeInPlace(data []byte, node *jsonedit.Node, entry *jsonedit.Object) (string, error) {
	old := data[node.Start:node.End]
	if !bytes.ContainsAny(old, "\n") {
		b, err := jsonedit.EncodeValue(entry, "", "")
		return string(b), err
	}
	indent, newline := jsonedit.Layout(data)
	lineStart := bytes.LastIndexByte(data[:node.Start], '\n') + 1
	line := data[lineStart:node.Start]
	lead := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
	b, err := jsonedit.EncodeValue(entry, indent, newline+string(lead))
	return string(b), err
}

// checkJSONEdit parses the edited file as the client reads it and checks
// that it holds what the original held, but for key's entry, which is
// gated: a guard against an edit that would change more than it says.
func checkJSONEdit(c *mcpClient, before, after []byte, key string, gated *jsonedit.Object) error {
	a, err := jsonedit.Parse(after, c.syntax)
	if err != nil {
		return fmt.Errorf("the edited file would not parse (%v)", err)
	}
	b, _ := jsonedit.Parse(before, c.syntax)
	av, bv := a.Value().(*jsonedit.Object), b.Value().(*jsonedit.Object)
	as, _ := av.Get(c.servers)
	bs, _ := bv.Get(c.servers)
	got, _ := as.(*jsonedit.Object).Get(key)
	if !reflect.DeepEqual(got, gated) {
		return errors.New("the edited file would not hold the gated entry as written")
	}
	as.(*jsonedit.Object).Set(key, nil)
	bs.(*jsonedit.Object).Set(key, nil)
	if !reflect.DeepEqual(av, bv) {
		return errors.New("editing the file would change more than the entry")
	}
	return nil
}

// findJSONSpan returns where key's entry stands and whether it runs the
// gate, for --undo.
func findJSONSpan(c *mcpClient, path string, data []byte, key string) (start, end int, gated bool, err error) {
	_, entry, err := findJSONEntry(c, path, data, key)
	if err != nil {
		return 0, 0, false, err
	}
	return entry.node.Start, entry.node.End, isGate(entryCommand(entry.value)), nil
}

// jsonGateArgs returns the args of every entry in data that runs the gate,
// to see whether a token file is still named.
func jsonGateArgs(c *mcpClient, data []byte) [][]string {
	root, err := jsonedit.Parse(data, c.syntax)
	if err != nil || !root.IsObject() {
		return nil
	}
	servers, _ := root.Lookup(c.servers)
	if servers == nil || !servers.IsObject() {
		return nil
	}
	var all [][]string
	for _, m := range servers.Members {
		if o, ok := m.Value.Value().(*jsonedit.Object); ok {
			if command, args := entryCommand(o); isGate(command, args) {
				all = append(all, args)
			}
		}
	}
	return all
}
