package mcpgate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/askd-dev/askd"
)

// approvalInput is the approval that asks for call c, without its key:
// tool_name mcp__NAME__TOOL (the name Claude Code gives the tool), the
// arguments as payload (canonical: the same call is the same payload) and
// as details, rendered, source NAME. refusal is the error result's text
// when the call cannot be put to askd: arguments that are no object, or
// over askd's payload limit, or a name askd refuses. Nothing is asked then.
func (g *gate) approvalInput(c *toolCall) (in askd.AskInput, refusal string) {
	args := c.args
	if isNull(args) {
		args = json.RawMessage("{}") // no arguments: an empty object
	}
	payload, ok := canonicalObject(args)
	if !ok {
		return in, fmt.Sprintf("askd gate: the arguments of %s are not a JSON object, so no one can approve them; nothing was asked, and the MCP server did not get the call.", c.tool)
	}
	// What the person reads is what the server gets: no key twice (parsers
	// differ on which one counts), UTF-8 only.
	var obj map[string]json.RawMessage
	if err := askd.DecodeOpen(args, &obj); err != nil {
		return in, fmt.Sprintf("askd gate: the arguments of %s are not strict JSON (%s); nothing was asked, and the MCP server did not get the call.", c.tool, askd.ErrorMessage(err))
	}
	if len(payload) > askd.MaxPayloadBytes {
		return in, fmt.Sprintf("askd gate: the arguments of %s are %d bytes, over askd's limit of %d bytes for an approval's payload; nothing was asked, and the MCP server did not get the call.", c.tool, len(payload), askd.MaxPayloadBytes)
	}
	in = askd.AskInput{
		Kind:     askd.KindApproval,
		Title:    clip(oneLine("Call "+c.tool), askd.MaxTitleChars), // the card adds "through NAME" (Source)
		Details:  renderArgs(g.name, c.tool, payload),
		Payload:  payload,
		ToolName: "mcp__" + g.name + "__" + c.tool,
		Source:   g.name,
		Key:      callKey("", &askd.AskInput{}), OneCall: true, // checked with their shape
	}
	if err := in.Validate(false); err != nil {
		return in, fmt.Sprintf("askd gate: this call to %s cannot be put to askd (%s); nothing was asked, and the MCP server did not get the call.", c.tool, askd.ErrorMessage(err))
	}
	return in, ""
}

// renderArgs is an approval's details: which server and tool, and each
// argument (members in order), strings as the text they hold and anything
// else as JSON, each in a code block (the arguments are the MCP client's
// words, never Markdown). Past askd's limit for details, the longest
// values are cut; the payload always holds them whole.
func renderArgs(server, tool string, canonical []byte) string {
	var args map[string]json.RawMessage
	json.Unmarshal(canonical, &args)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range args {
			if !yield(k) {
				return
			}
		}
	})
	values := make([]string, len(names))
	for i, k := range names {
		var s string
		if json.Unmarshal(args[k], &s) != nil {
			s = indentJSON(args[k])
		}
		values[i] = multiLine(s)
	}
	limit := askd.MaxApprovalDetails - 1024 // room for the headings
	for cut := 0; ; cut++ {
		var b strings.Builder
		fmt.Fprintf(&b, "MCP server %s, tool %s, through askd's MCP gate.\n", oneLine(server), oneLine(tool))
		if len(names) == 0 {
			b.WriteString("\nNo arguments.\n")
		}
		for i, k := range names {
			fmt.Fprintf(&b, "\n%s:\n", oneLine(k))
			codeBlock(&b, values[i])
		}
		if cut > 0 {
			b.WriteString("\nSome values are cut here; the payload holds them whole.\n")
		}
		if b.Len() <= limit || cut > 64 {
			return clipBytes(b.String(), askd.MaxApprovalDetails)
		}
		longest := 0
		for i := range values {
			if len(values[i]) > len(values[longest]) {
				longest = i
			}
		}
		values[longest] = clipBytes(values[longest], len(values[longest])/2) + "\n…"
	}
}

func indentJSON(raw json.RawMessage) string {
	var v any
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return string(raw)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return string(raw)
	}
	return string(out)
}

// codeBlock writes text as a fenced code block whose fence is longer than
// any run of backticks in it, so that nothing in it ends the block.
func codeBlock(w *strings.Builder, text string) {
	fence, run := 3, 0
	for _, r := range text {
		if r == '`' {
			run++
			fence = max(fence, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", fence)
	fmt.Fprintf(w, "%s\n%s\n%s\n", f, text, f)
}

// multiLine is s fit for a field of several lines: control characters but
// line breaks and tabs written as escapes, as askd.Printable writes them.
func multiLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		parts := strings.Split(l, "\t")
		for j, p := range parts {
			parts[j] = askd.Printable(p)
		}
		lines[i] = strings.Join(parts, "\t")
	}
	return strings.Join(lines, "\n")
}

// oneLine is s fit for a one-line field: control and invisible characters
// written as escapes (askd.Printable).
func oneLine(s string) string { return askd.Printable(s) }

// clip cuts s to at most n characters, the last one an ellipsis.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// clipBytes cuts s to at most n bytes, at a character's boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
