package gate

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/askd-dev/askd"
)

// What askd install git-gate writes for the hook and the hook reads: the
// config file beside it (the server and agent token) and the protected
// refs (its --ref patterns).

// ReadConfig reads the config file askd install git-gate wrote beside the
// hook (ParseConfig), by name: "url" and "token". No file is an empty
// config. A file others may read or write is refused, unread: it holds an
// agent token.
func ReadConfig(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%s is mode %04o, open to others, and holds an agent token: askd does not read it until it is 0600 (chmod 600 %s)", path, perm, path)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	return ParseConfig(path, data)
}

// ParseConfig reads a config file's text, name=value lines (url= and
// token=, as askd install git-gate writes them); blank lines and # comments
// are skipped, and white space around a name or value. A line of another
// form is an error naming path.
func ParseConfig(path string, data []byte) (map[string]string, error) {
	conf := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s: %q is not a name=value line", path, clip(askd.Printable(k), 40))
		}
		conf[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return conf, nil
}

// RefPatterns are the protected refs: git refspec patterns, each a ref name
// with at most one *, which matches any part of a name, slashes included.
// None protects every ref. As a flag.Value, each --ref adds one, checked by
// CheckRefPattern.
type RefPatterns []string

func (p *RefPatterns) String() string { return strings.Join(*p, ", ") }

func (p *RefPatterns) Set(v string) error {
	if err := CheckRefPattern(v); err != nil {
		return err
	}
	*p = append(*p, v)
	return nil
}

// CheckRefPattern is the hook's own light check of a pattern (install asks
// git check-ref-format too): a full ref name under refs/, at most one *.
func CheckRefPattern(v string) error {
	if !strings.HasPrefix(v, "refs/") {
		return fmt.Errorf("not a full ref name: patterns start with refs/, such as refs/heads/main or refs/tags/*")
	}
	if strings.Count(v, "*") > 1 {
		return fmt.Errorf("more than one *: a pattern has at most one")
	}
	return nil
}

// Match reports whether ref is protected: it matches one of the patterns,
// or there are none.
func (p RefPatterns) Match(ref string) bool {
	if len(p) == 0 {
		return true
	}
	for _, pat := range p {
		before, after, glob := strings.Cut(pat, "*")
		if !glob && ref == pat || glob && len(ref) >= len(before)+len(after) && strings.HasPrefix(ref, before) && strings.HasSuffix(ref, after) {
			return true
		}
	}
	return false
}
