package apicmd

import (
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/cli"
)

// Form asks (SPEC §9) on the terminal: describeForm prints one for askd show
// and check, formAnswer reads askd answer's FIELD=VALUE words into its
// answer, typed by the schema and checked with the schema's own Check, so
// a refusal reads as the server's would.

// describeForm prints a form ask's message (every line), who asks, and
// either its fields, each with its rules and, once answered, its value, or
// the address a url-mode form sends the person to, its host set apart.
func describeForm(w io.Writer, a *askd.Ask) {
	block(w, "  ", a.Title)
	by := a.Source
	if by == "" { // created over the API, not relayed from an MCP server
		by = a.Agent
	}
	fmt.Fprintf(w, "  asked by %s through %s\n", cli.Term(by), cli.Term(a.Session))
	if a.URL != "" {
		fmt.Fprintln(w, "  open this address in a browser (askd never opens it):")
		fmt.Fprintf(w, "    %s\n", cli.Term(a.URL))
		if u, err := url.Parse(a.URL); err == nil && u.Host != "" {
			fmt.Fprintf(w, "  host: %s\n", cli.Term(u.Host))
		}
		return
	}
	s, err := askd.ParseFormSchema(a.Schema)
	if err != nil { // askd stores no schema it cannot parse; an old database might
		fmt.Fprintf(w, "  the form cannot be shown: %s\n", cli.Term(askd.ErrorMessage(err)))
		return
	}
	for i := range s.Fields {
		f := &s.Fields[i]
		head := "  [" + cli.Term(f.Name) + "]"
		if f.Title != "" {
			head += " " + cli.Term(f.Title)
		}
		fmt.Fprintf(w, "%s  %s\n", head, fieldRules(f))
		if f.Description != "" {
			block(w, "    ", f.Description)
		}
		for _, o := range f.Options {
			fmt.Fprintf(w, "    - %s\n", optionText(o))
		}
		if a.Answer != nil {
			if v, ok := a.Answer.Content[f.Name]; ok {
				fmt.Fprintf(w, "    answer: %s\n", valueText(f, v))
			}
		}
	}
}

// fieldRules is what a field takes, in words: its type, bounds and format,
// whether it is required, and its default.
func fieldRules(f *askd.FormField) string {
	var r []string
	switch f.Type {
	case askd.FieldString:
		r = append(r, formatWords[f.Format])
		if b := bounds(intFloat(f.MinLength), intFloat(f.MaxLength)); b != "" {
			r = append(r, b+" characters")
		}
		if f.Pattern != nil {
			r = append(r, "matching "+cli.Term(f.Pattern.String()))
		}
	case askd.FieldNumber, askd.FieldInteger:
		r = append(r, map[askd.FieldType]string{askd.FieldNumber: "number", askd.FieldInteger: "whole number"}[f.Type])
		if b := bounds(f.Minimum, f.Maximum); b != "" {
			r = append(r, b)
		}
	case askd.FieldBoolean:
		r = append(r, "true or false")
	case askd.FieldEnum:
		r = append(r, "one of")
	case askd.FieldMulti:
		r = append(r, "any of")
		if b := bounds(intFloat(f.MinItems), intFloat(f.MaxItems)); b != "" {
			r = append(r, b+" chosen")
		}
	}
	if f.Required {
		r = append(r, "required")
	}
	if f.Default != nil {
		r = append(r, "default "+valueText(f, f.Default))
	}
	return strings.Join(r, ", ")
}

// formatWords name a text field's format.
var formatWords = map[string]string{
	"":          "text",
	"email":     "an e-mail address",
	"uri":       "a URI (such as https://example.com/x)",
	"date":      "a date (such as 2026-12-31)",
	"date-time": "a date and time (such as 2026-12-31T09:30:00Z)",
}

// bounds is "1 to 100", "at least 1", "at most 100" or "".
func bounds(lo, hi *float64) string {
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("%v to %v", *lo, *hi)
	case lo != nil:
		return fmt.Sprintf("at least %v", *lo)
	case hi != nil:
		return fmt.Sprintf("at most %v", *hi)
	}
	return ""
}

func intFloat(n *int) *float64 {
	if n == nil {
		return nil
	}
	f := float64(*n)
	return &f
}

// optionText is a choice as the person types it, with its title:
// "l (Large)".
func optionText(o askd.FormOption) string {
	if o.Title == "" || o.Title == o.Const {
		return cli.Term(o.Const)
	}
	return cli.Term(o.Const) + " (" + cli.Term(o.Title) + ")"
}

// valueText is a field's value (a default or an answer) for people: text
// quoted, a choice with its title, numbers and booleans as they are.
func valueText(f *askd.FormField, v any) string {
	choice := func(v any) string {
		s, ok := v.(string)
		if !ok {
			return cli.Term(fmt.Sprint(v))
		}
		if i := slices.IndexFunc(f.Options, func(o askd.FormOption) bool { return o.Const == s }); i >= 0 {
			return optionText(f.Options[i])
		}
		return strconv.Quote(cli.Term(s))
	}
	switch v := v.(type) {
	case string:
		if f.Type == askd.FieldEnum {
			return choice(v)
		}
		return strconv.Quote(cli.Term(v))
	case []any:
		if len(v) == 0 {
			return "none"
		}
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = choice(e)
		}
		return strings.Join(parts, ", ")
	}
	return cli.Term(fmt.Sprint(v))
}

// formHowTo tells the person how to answer a pending form ask.
func formHowTo(w io.Writer, a *askd.Ask) {
	if a.URL != "" {
		fmt.Fprintf(w, "\nOnce you have finished there: askd answer %d --done; to refuse: askd answer %d --decline\n", a.ID, a.ID)
		return
	}
	fmt.Fprintf(w, "\nAnswer: askd answer %d FIELD=VALUE... (a multi-select field once per choice); to refuse: askd answer %d --decline\n", a.ID, a.ID)
}

// formAnswer reads a form ask's answer from the command line: --decline;
// --done (url mode: finished at the address; form mode: the form as it is
// pre-filled); or FIELD=VALUE words, each value typed by the field's type,
// fields not given taking their defaults. The content is checked with the
// schema's Check before anything is sent: a refusal is the server's words,
// near misses named.
func formAnswer(a *askd.Ask, words []string, f answerFlags) (askd.Answer, error) {
	var ans askd.Answer
	if err := errors.Join(notFor(a.Kind, "--payload", f.payload != ""), notFor(a.Kind, "--comment", f.comment != ""),
		notFor(a.Kind, "--response", f.response != ""), notFor(a.Kind, "--own-words", f.ownWords)); err != nil {
		return ans, err
	}
	switch {
	case f.decline:
		if f.done || len(words) > 0 {
			return ans, cli.UsageError("answer: --decline refuses the form; give no FIELD=VALUE or --done with it")
		}
		return askd.Answer{Action: askd.FormDecline}, nil
	case a.URL != "":
		if len(words) > 0 || !f.done {
			return ans, cli.UsageError(fmt.Sprintf("answer: ask #%d sends you to an address, it has no fields: --done once you have finished there, or --decline (askd show %d)", a.ID, a.ID))
		}
		return askd.Answer{Action: askd.FormAccept}, nil
	}
	s, err := askd.ParseFormSchema(a.Schema)
	if err != nil {
		return ans, fmt.Errorf("ask #%d: its form cannot be read: %w", a.ID, err)
	}
	if len(words) == 0 && !f.done {
		return ans, cli.UsageError(fmt.Sprintf("answer: give ask #%d's fields as FIELD=VALUE (%s), --done to send the form as it is pre-filled, or --decline", a.ID, fieldNames(s)))
	}
	content, err := formContent(s, words)
	if err != nil {
		return ans, err
	}
	if err := s.Check(content); err != nil {
		return ans, cli.UsageError("answer: " + askd.ErrorMessage(err))
	}
	return askd.Answer{Action: askd.FormAccept, Content: content}, nil
}

// formContent is the form's defaults with the FIELD=VALUE words over them.
// A value that does not read as its field's type (count=abc) stays the text
// it is, and so does a field the form lacks: Check names either, in the
// server's words.
func formContent(s *askd.FormSchema, words []string) (map[string]any, error) {
	given := map[string][]string{}
	var order []string
	for _, w := range words {
		name, value, ok := strings.Cut(w, "=")
		if !ok || name == "" {
			return nil, cli.UsageError(fmt.Sprintf("answer: %q is not FIELD=VALUE; the form's fields are %s", w, fieldNames(s)))
		}
		if _, seen := given[name]; !seen {
			order = append(order, name)
		}
		given[name] = append(given[name], value)
	}
	content := s.Defaults()
	for _, name := range order {
		values := given[name]
		f := s.Field(name)
		switch {
		case f == nil:
			content[name] = values[0]
		case f.Type == askd.FieldMulti:
			list, err := choices(f, values)
			if err != nil {
				return nil, err
			}
			content[name] = list
		case len(values) > 1:
			return nil, cli.UsageError(fmt.Sprintf("answer: %s takes one value, given %d times (%s)", name, len(values), quoteList(values)))
		default:
			content[name] = typed(f, values[0])
		}
	}
	return content, nil
}

// choices are a multi-select field's values, one per FIELD=VALUE word; an
// empty value chooses nothing (tags= alone is the empty list). Several
// choices written in one value with commas are refused with how to write
// them, unless that is one choice.
func choices(f *askd.FormField, values []string) ([]any, error) {
	isOption := func(v string) bool {
		return slices.ContainsFunc(f.Options, func(o askd.FormOption) bool { return o.Const == v })
	}
	list := []any{}
	for _, v := range values {
		if v == "" {
			continue
		}
		if parts := strings.Split(v, ","); len(parts) > 1 && !isOption(v) {
			each := make([]string, len(parts))
			for i, p := range parts {
				each[i] = f.Name + "=" + strings.TrimSpace(p)
			}
			return nil, cli.UsageError(fmt.Sprintf("answer: %s=%s: give each choice as its own %s=VALUE (%s)", f.Name, v, f.Name, strings.Join(each, " ")))
		}
		list = append(list, v)
	}
	return list, nil
}

// number is a decimal number as a person writes it: 42, -1.5, .5, 1e3.
var number = regexp.MustCompile(`^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$`)

// typed is v as its field's type: a number for a number or integer field,
// a boolean from true, false, yes or no; the text as it is otherwise, or
// when it does not read as the type, for Check to refuse.
func typed(f *askd.FormField, v string) any {
	t := strings.TrimSpace(v)
	switch f.Type {
	case askd.FieldNumber, askd.FieldInteger:
		if number.MatchString(t) {
			if n, err := strconv.ParseFloat(t, 64); err == nil {
				return n
			}
		}
	case askd.FieldBoolean:
		switch strings.ToLower(t) {
		case "true", "yes":
			return true
		case "false", "no":
			return false
		}
	}
	return v
}

// fieldNames lists a form's field names.
func fieldNames(s *askd.FormSchema) string {
	names := make([]string, len(s.Fields))
	for i, f := range s.Fields {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}
