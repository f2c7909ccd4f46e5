package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// Which parts of Codex's config.toml are askd's (see editCodexConfig): in
// the text, to cut them; in the decoded document, to check the result.

// The TOML paths of askd's tables.
var (
	askdServerPath = []string{"mcp_servers", "askd"}
	stopGroupPath  = []string{"hooks", "Stop"}
	stopHookPath   = []string{"hooks", "Stop", "hooks"}
)

// askdSections returns the byte ranges to cut, in order, or an error when
// askd's entries are written in a form it does not rewrite (inline tables,
// dotted keys), which it names by line.
func askdSections(data []byte, items []tomlItem) ([][2]int, error) {
	var sections []tomlSection
	for i, it := range items {
		switch {
		case it.header():
			sections = append(sections, tomlSection{header: i, last: i})
		case it.kind == unstable.KeyValue && len(sections) > 0:
			sections[len(sections)-1].last = i
		}
	}
	var cut []tomlSection
	for _, s := range sections {
		if hasPrefix(items[s.header].path, askdServerPath) {
			cut = append(cut, s)
		}
	}
	cut = append(cut, askdStopSections(items, sections)...)
	if err := refuseInlineAskd(data, items, cut); err != nil {
		return nil, err
	}
	ranges := make([][2]int, 0, len(cut))
	for _, s := range cut {
		ranges = append(ranges, [2]int{attachedStart(items, s.header), blankLinesAfter(data, items[s.last].end)})
	}
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	return ranges, nil
}

// stopGroup is a [[hooks.Stop]] table with its [[hooks.Stop.hooks]]
// handlers, each with the tables below it. In TOML a handler belongs to the
// latest [[hooks.Stop]] above it, even with other tables between.
type stopGroup struct {
	header   tomlSection
	handlers []stopHandler
	other    bool // the group has keys of its own, or tables that are no handler's
}

type stopHandler struct {
	sections []tomlSection
	askd     bool
}

// askdStopSections returns askd's Stop hook handlers, with their whole
// group when it holds nothing else.
func askdStopSections(items []tomlItem, sections []tomlSection) []tomlSection {
	var groups []*stopGroup
	for _, s := range sections {
		h := items[s.header]
		switch {
		case h.kind == unstable.ArrayTable && slices.Equal(h.path, stopGroupPath):
			groups = append(groups, &stopGroup{header: s, other: s.last != s.header})
		case len(groups) == 0 || !hasPrefix(h.path, stopGroupPath):
		case h.kind == unstable.ArrayTable && slices.Equal(h.path, stopHookPath):
			g := groups[len(groups)-1]
			g.handlers = append(g.handlers, stopHandler{[]tomlSection{s}, isAskdCodexHook(items[s.header+1 : s.last+1])})
		case hasPrefix(h.path, stopHookPath) && len(groups[len(groups)-1].handlers) > 0:
			hs := groups[len(groups)-1].handlers
			hs[len(hs)-1].sections = append(hs[len(hs)-1].sections, s)
		default:
			groups[len(groups)-1].other = true
		}
	}
	var cut []tomlSection
	for _, g := range groups {
		var askd, all []tomlSection
		for _, h := range g.handlers {
			all = append(all, h.sections...)
			if h.askd {
				askd = append(askd, h.sections...)
			}
		}
		switch {
		case len(askd) == 0:
		case len(askd) == len(all) && !g.other:
			cut = append(append(cut, g.header), all...)
		default: // the user's handlers share askd's group: only askd's go
			cut = append(cut, askd...)
		}
	}
	return cut
}

// refuseInlineAskd returns an error naming the line of an entry askd cannot
// rewrite, outside the sections being cut: its server as an inline table or
// dotted keys, its Stop hook in an inline array, or an inline mcp_servers or
// hooks.Stop beside which TOML allows no table of askd's.
func refuseInlineAskd(data []byte, items []tomlItem, cut []tomlSection) error {
	inCut := map[int]bool{}
	for _, s := range cut {
		for i := s.header; i <= s.last; i++ {
			inCut[i] = true
		}
	}
	for i, it := range items {
		if it.kind != unstable.KeyValue || inCut[i] {
			continue
		}
		line := lineOf(data, it.start)
		switch {
		case hasPrefix(it.path, askdServerPath):
			return fmt.Errorf("line %d: askd's MCP server is written inline (%s); askd rewrites only a [mcp_servers.askd] table: delete the entry or write it as that table, then run again",
				line, firstLine(it.raw))
		case hasPrefix(askdServerPath, it.path):
			return fmt.Errorf("line %d: %s is written inline (%s), and TOML allows no [mcp_servers.askd] table beside it: write its servers as [mcp_servers.NAME] tables, then run again",
				line, strings.Join(it.path, "."), firstLine(it.raw))
		case hasPrefix(it.path, stopGroupPath) && strings.Contains(it.raw, "/hooks/claude"):
			return fmt.Errorf("line %d: askd's Stop hook is written inline (%s); askd rewrites only [[hooks.Stop]] tables: delete it, then run again",
				line, firstLine(it.raw))
		case hasPrefix(stopGroupPath, it.path):
			return fmt.Errorf("line %d: %s is written inline (%s), and TOML allows no [[hooks.Stop]] table beside it: write it as tables, then run again",
				line, strings.Join(it.path, "."), firstLine(it.raw))
		}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// isAskdCodexHook reports whether a handler table's key-values are askd's
// Stop hook: askd hook, or the curl line of earlier installs.
func isAskdCodexHook(kvs []tomlItem) bool {
	for _, kv := range kvs {
		if kv.kind == unstable.KeyValue && slices.Equal(kv.path, append(slices.Clone(stopHookPath), "command")) {
			return isAskdHookCommand(kv.value)
		}
	}
	return false
}

// codexBlockStart is how askd's block has always begun (askd install codex
// printed it to be appended by hand before it edited the file).
const codexBlockStart = "# askd for Codex"

// attachedStart is where header i's lines begin: the comment lines right
// above it, with no blank line between, are its own, up to the first line
// of askd's block (a comment of the user's right above that stays).
func attachedStart(items []tomlItem, i int) int {
	start := items[i].start
	for j := i - 1; j >= 0 && items[j].kind == unstable.Comment && items[j].end == start; j-- {
		start = items[j].start
		if strings.HasPrefix(items[j].raw, codexBlockStart) {
			break
		}
	}
	return start
}

// mapAt returns the table at path in a decoded document.
func mapAt(doc map[string]any, path ...string) (map[string]any, bool) {
	for _, k := range path {
		next, ok := doc[k].(map[string]any)
		if !ok {
			return nil, false
		}
		doc = next
	}
	return doc, true
}

// stopGroups returns hooks.Stop's groups in a decoded document.
func stopGroups(doc map[string]any) []any {
	hooks, _ := mapAt(doc, "hooks")
	groups, _ := hooks["Stop"].([]any)
	return groups
}

func isAskdHandler(h any) bool {
	m, _ := h.(map[string]any)
	command, _ := m["command"].(string)
	return isAskdHookCommand(command)
}

func countAskdStopHooks(doc map[string]any) int {
	n := 0
	for _, g := range stopGroups(doc) {
		gm, _ := g.(map[string]any)
		handlers, _ := gm["hooks"].([]any)
		for _, h := range handlers {
			if isAskdHandler(h) {
				n++
			}
		}
	}
	return n
}

// withoutAskd is a decoded document with askd's server and Stop hooks taken
// out (and the tables left empty by that), for comparing what is the user's.
// It changes doc.
func withoutAskd(doc map[string]any) map[string]any {
	if servers, ok := mapAt(doc, "mcp_servers"); ok {
		delete(servers, "askd")
		if len(servers) == 0 {
			delete(doc, "mcp_servers")
		}
	}
	hooks, ok := mapAt(doc, "hooks")
	if !ok {
		return doc
	}
	var kept []any
	for _, g := range stopGroups(doc) {
		gm, ok := g.(map[string]any)
		if !ok {
			kept = append(kept, g)
			continue
		}
		handlers, _ := gm["hooks"].([]any)
		var rest []any
		for _, h := range handlers {
			if !isAskdHandler(h) {
				rest = append(rest, h)
			}
		}
		switch {
		case len(rest) == len(handlers):
		case len(rest) > 0:
			gm["hooks"] = rest
		case len(gm) == 1: // askd's own group
			continue
		default:
			delete(gm, "hooks")
		}
		kept = append(kept, gm)
	}
	if _, ok := hooks["Stop"].([]any); ok {
		if len(kept) == 0 {
			delete(hooks, "Stop")
		} else {
			hooks["Stop"] = kept
		}
	}
	if len(hooks) == 0 {
		delete(doc, "hooks")
	}
	return doc
}
