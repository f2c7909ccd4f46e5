package install

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/askd-dev/askd/internal/hookcmd"
	"github.com/askd-dev/askd/internal/tomledit"
)

// Editing Codex's config.toml: askd's own tables are cut out of the user's
// text and its fresh block appended (tomledit), so every other byte
// (tables, comments, key order) stays as it was; the result is parsed back
// and compared with the original before anything is written.
//
// askd's own tables are [mcp_servers.askd] with any [mcp_servers.askd.*]
// below it, and each [[hooks.Stop.hooks]] handler whose command posts to
// askd's /hooks/claude, with its [[hooks.Stop]] group when the group holds
// nothing else. A cut table takes with it the comment lines right above its
// header (no blank line between: that is where askd writes its notes, up to
// the line its block starts with) and the blank lines after it.
//
// Below editCodexConfig: which parts of the file are askd's, in the text, to
// cut them, and in the decoded document, to check the result.

// editCodexConfig returns data with askd's tables replaced by block, or an
// error (data unchanged) when data is not TOML, holds askd's entries in a
// form askd does not rewrite, or the result would not be the same config
// with askd's tables in it once.
func editCodexConfig(data []byte, block string) ([]byte, error) {
	items, lexErr := tomledit.Parse(data)
	before, err := tomledit.Decode(data)
	if err != nil {
		if lexErr == nil && tomledit.CountTables(items, askdServerPath) > 1 {
			err = fmt.Errorf("%v (askd's block twice, as appending `askd install codex` twice leaves it: delete one, then run again)", err)
		}
		return nil, err
	}
	if lexErr != nil {
		return nil, lexErr
	}
	cuts, err := askdSections(data, items)
	if err != nil {
		return nil, err
	}
	// A blank line before askd's block; a second run, having cut the block
	// and the blank lines after it, finds the same and adds nothing.
	result := tomledit.Splice(data, cuts, block)

	after, err := tomledit.Decode(result)
	if err != nil {
		return nil, fmt.Errorf("askd's tables cannot go into this file as it is (%v); nothing was changed", err)
	}
	if n := countAskdStopHooks(after); n != 1 {
		return nil, fmt.Errorf("the edited file would hold %d askd Stop hooks, not 1; nothing was changed", n)
	}
	if _, ok := mapAt(after, askdServerPath...); !ok {
		return nil, errors.New("the edited file would hold no [mcp_servers.askd]; nothing was changed")
	}
	// (A NaN in the file never equals itself: such a file is refused.)
	if !reflect.DeepEqual(withoutAskd(before), withoutAskd(after)) {
		return nil, errors.New("editing the file would change more than askd's tables; nothing was changed")
	}
	return result, nil
}

// The TOML paths of askd's tables.
var (
	askdServerPath = []string{"mcp_servers", "askd"}
	stopGroupPath  = []string{"hooks", "Stop"}
	stopHookPath   = []string{"hooks", "Stop", "hooks"}
)

// askdSections returns the byte ranges to cut, in order, or an error when
// askd's entries are written in a form it does not rewrite (inline tables,
// dotted keys), which it names by line.
func askdSections(data []byte, items []tomledit.Item) ([][2]int, error) {
	sections := tomledit.Sections(items)
	var cut []tomledit.Section
	for _, s := range sections {
		if tomledit.HasPrefix(items[s.Header].Path, askdServerPath) {
			cut = append(cut, s)
		}
	}
	cut = append(cut, askdStopSections(items, sections)...)
	if err := refuseInlineAskd(data, items, cut); err != nil {
		return nil, err
	}
	ranges := make([][2]int, 0, len(cut))
	for _, s := range cut {
		ranges = append(ranges, [2]int{attachedStart(items, s.Header), tomledit.BlankLinesAfter(data, items[s.Last].End)})
	}
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	return ranges, nil
}

// stopGroup is a [[hooks.Stop]] table with its [[hooks.Stop.hooks]]
// handlers, each with the tables below it. In TOML a handler belongs to the
// latest [[hooks.Stop]] above it, even with other tables between.
type stopGroup struct {
	header   tomledit.Section
	handlers []stopHandler
	other    bool // the group has keys of its own, or tables that are no handler's
}

type stopHandler struct {
	sections []tomledit.Section
	askd     bool
}

// askdStopSections returns askd's Stop hook handlers, with their whole
// group when it holds nothing else.
func askdStopSections(items []tomledit.Item, sections []tomledit.Section) []tomledit.Section {
	var groups []*stopGroup
	for _, s := range sections {
		h := items[s.Header]
		switch {
		case h.Kind == tomledit.ArrayTable && slices.Equal(h.Path, stopGroupPath):
			groups = append(groups, &stopGroup{header: s, other: s.Last != s.Header})
		case len(groups) == 0 || !tomledit.HasPrefix(h.Path, stopGroupPath):
		case h.Kind == tomledit.ArrayTable && slices.Equal(h.Path, stopHookPath):
			g := groups[len(groups)-1]
			g.handlers = append(g.handlers, stopHandler{[]tomledit.Section{s}, isAskdCodexHook(items[s.Header+1 : s.Last+1])})
		case tomledit.HasPrefix(h.Path, stopHookPath) && len(groups[len(groups)-1].handlers) > 0:
			hs := groups[len(groups)-1].handlers
			hs[len(hs)-1].sections = append(hs[len(hs)-1].sections, s)
		default:
			groups[len(groups)-1].other = true
		}
	}
	var cut []tomledit.Section
	for _, g := range groups {
		var askd, all []tomledit.Section
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
func refuseInlineAskd(data []byte, items []tomledit.Item, cut []tomledit.Section) error {
	inCut := map[int]bool{}
	for _, s := range cut {
		for i := s.Header; i <= s.Last; i++ {
			inCut[i] = true
		}
	}
	for i, it := range items {
		if it.Kind != tomledit.KeyValue || inCut[i] {
			continue
		}
		line := tomledit.LineOf(data, it.Start)
		switch {
		case tomledit.HasPrefix(it.Path, askdServerPath):
			return fmt.Errorf("line %d: askd's MCP server is written inline (%s); askd rewrites only a [mcp_servers.askd] table: delete the entry or write it as that table, then run again",
				line, firstLine(it.Raw))
		case tomledit.HasPrefix(askdServerPath, it.Path):
			return fmt.Errorf("line %d: %s is written inline (%s), and TOML allows no [mcp_servers.askd] table beside it: write its servers as [mcp_servers.NAME] tables, then run again",
				line, strings.Join(it.Path, "."), firstLine(it.Raw))
		case tomledit.HasPrefix(it.Path, stopGroupPath) && strings.Contains(it.Raw, "/hooks/claude"):
			return fmt.Errorf("line %d: askd's Stop hook is written inline (%s); askd rewrites only [[hooks.Stop]] tables: delete it, then run again",
				line, firstLine(it.Raw))
		case tomledit.HasPrefix(stopGroupPath, it.Path):
			return fmt.Errorf("line %d: %s is written inline (%s), and TOML allows no [[hooks.Stop]] table beside it: write it as tables, then run again",
				line, strings.Join(it.Path, "."), firstLine(it.Raw))
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
func isAskdCodexHook(kvs []tomledit.Item) bool {
	for _, kv := range kvs {
		if kv.Kind == tomledit.KeyValue && slices.Equal(kv.Path, append(slices.Clone(stopHookPath), "command")) {
			return hookcmd.IsAskd(kv.Value)
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
func attachedStart(items []tomledit.Item, i int) int {
	start := items[i].Start
	for j := i - 1; j >= 0 && items[j].Kind == tomledit.Comment && items[j].End == start; j-- {
		start = items[j].Start
		if strings.HasPrefix(items[j].Raw, codexBlockStart) {
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
	return hookcmd.IsAskd(command)
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
