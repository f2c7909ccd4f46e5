package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/jsonedit"
	"github.com/askd-dev/askd/internal/tomledit"
)

// What --undo needs is kept beside the config, in FILE.askd-gate.json, not
// in the gated entry: Codex warns of a key it does not know in a server's
// table, and VS Code's schema flags one; a file of askd's own is read by no
// client. For each gated server it holds the entry's text as it was and as
// install wrote it, so that --undo puts the first back byte for byte where
// the second stands, and can say when the entry changed since.

// gateRecord is one gated server's entry, as it was and as install wrote it.
type gateRecord struct {
	was, gated string
}

// sidecarPath is the file that keeps the records of the config at target.
func sidecarPath(target string) string { return target + ".askd-gate.json" }

const sidecarNote = "askd install mcp-gate keeps here each server entry as it was before install gated it, for askd install mcp-gate --undo to put back; without this file, --undo cannot (the backups can)"

// readRecords reads the records file of the config at target: none yet is
// an empty one.
func readRecords(target string) (*jsonedit.Object, error) {
	data, err := os.ReadFile(sidecarPath(target))
	if errors.Is(err, fs.ErrNotExist) {
		return jsonedit.NewObject().Set("note", sidecarNote).Set("servers", jsonedit.NewObject()), nil
	}
	if err != nil {
		return nil, err
	}
	root, err := jsonedit.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", sidecarPath(target), err)
	}
	if _, err := root.Object("servers"); err != nil {
		return nil, fmt.Errorf("%s: %v", sidecarPath(target), err)
	}
	return root, nil
}

func writeRecords(target string, root *jsonedit.Object) error {
	out, err := jsonedit.Encode(root, "  ", "\n")
	if err != nil {
		return err
	}
	// 0600: the entry as it was may hold what its server needs (a header's
	// value, say) as the config does.
	return replaceFile(sidecarPath(target), out, 0o600)
}

// saveRecord keeps r for server key of the config at target.
func saveRecord(target, key string, r gateRecord) error {
	root, err := readRecords(target)
	if err != nil {
		return err
	}
	servers, _ := root.Object("servers")
	servers.Set(key, jsonedit.NewObject().Set("was", r.was).Set("gated", r.gated))
	return writeRecords(target, root)
}

// record returns the record of server key, if there is one.
func record(target, key string) (gateRecord, bool, error) {
	root, err := readRecords(target)
	if err != nil {
		return gateRecord{}, false, err
	}
	servers, _ := root.Object("servers")
	v, ok := servers.Get(key)
	if !ok {
		return gateRecord{}, false, nil
	}
	o, _ := v.(*jsonedit.Object)
	if o == nil {
		return gateRecord{}, false, fmt.Errorf("%s: %q is not a record", sidecarPath(target), key)
	}
	was, ok1 := getString(o, "was")
	gated, ok2 := getString(o, "gated")
	if !ok1 || !ok2 {
		return gateRecord{}, false, fmt.Errorf("%s: %q's record lacks its text", sidecarPath(target), key)
	}
	return gateRecord{was: was, gated: gated}, true, nil
}

func getString(o *jsonedit.Object, key string) (string, bool) {
	v, _ := o.Get(key)
	s, ok := v.(string)
	return s, ok
}

// dropRecord takes server key's record out, and the file with the last.
func dropRecord(target, key string) error {
	root, err := readRecords(target)
	if err != nil {
		return err
	}
	servers, _ := root.Object("servers")
	servers.Remove(key)
	if len(servers.Keys()) == 0 {
		err := os.Remove(sidecarPath(target))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return writeRecords(target, root)
}

// span returns where server key's entry stands in data and whether it runs
// the gate.
func (f *configFile) span(data []byte, key string) (start, end int, gated bool, err error) {
	if f.client.id == "codex" {
		return findCodexSpan(f.path, data, key)
	}
	return findJSONSpan(f.client, f.path, data, key)
}

// undo puts server key's entry back as its record has it, in place of the
// gated entry, every other byte kept; then drops the record, and the token
// file install wrote if no gated entry names it any more.
func (f *configFile) undo(e *cli.Env, key string) error {
	start, end, gated, err := f.span(f.data, key)
	if err != nil {
		return err
	}
	if !gated {
		fmt.Fprintf(e.Stdout, "server %q does not run through askd's gate: nothing to undo\n", key)
		report(e, f.path, false)
		return nil
	}
	rec, ok, err := record(f.target, key)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: no record of server %q as it was before the gate (%s); put it back from a backup (%s.askd-*.bak) or by hand: the server's own command follows -- in its args (or --upstream)",
			f.path, key, sidecarPath(f.target), f.path)
	}
	out := slices.Concat(f.data[:start], []byte(rec.was), f.data[end:])
	if err := f.parses(out); err != nil {
		return fmt.Errorf("%s: the entry as it was would not fit the file as it is now (%v); nothing was changed", f.path, err)
	}
	if string(f.data[start:end]) != rec.gated {
		fmt.Fprintf(e.Stdout, "server %q changed since install gated it: it is put back as it was before the gate (the backup has it as it is now)\n", key)
	}
	mode, err := f.backup(e)
	if err != nil {
		return err
	}
	if err := replaceFile(f.target, out, mode); err != nil {
		return fmt.Errorf("%s: %v", f.path, err)
	}
	report(e, f.path, true)
	if err := dropRecord(f.target, key); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "server %q runs as it did before the gate; restart %s (or its MCP servers)\n", key, f.client.name)
	return f.removeTokenFile(e, out)
}

// parses checks data as the client reads it.
func (f *configFile) parses(data []byte) error {
	if f.client.id == "codex" {
		_, err := tomledit.Decode(data)
		return err
	}
	_, err := jsonedit.Parse(data, f.client.syntax)
	return err
}

// removeTokenFile removes the token file install writes beside the config
// of a client that expands no variables, once no gated entry of data names
// it.
func (f *configFile) removeTokenFile(e *cli.Env, data []byte) error {
	abs, err := filepath.Abs(f.path)
	if err != nil || f.client.ref != nil {
		return nil
	}
	tokenFile := filepath.Join(filepath.Dir(abs), tokenFileName)
	if _, err := os.Stat(tokenFile); err != nil {
		return nil
	}
	for _, args := range jsonGateArgs(f.client, data) {
		if slices.Contains(args, tokenFile) {
			return nil
		}
	}
	if err := os.Remove(tokenFile); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "removed   %s (no gate reads it any more)\n", tokenFile)
	return nil
}
