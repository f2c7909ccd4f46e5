package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
)

// Flags returns a FlagSet for a command. Its usage goes to the FlagSet's
// output, which parse points at stdout for -h and silences otherwise: a
// mistake is one line from main, not the usage again.
func Flags(e *Env, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: askd %s %s\n\nFlags (each also the environment variable named after it):\n", name, synopsis)
		PrintDefaults(e, fs)
	}
	return fs
}

// PrintDefaults is fs.PrintDefaults, with each flag's environment variable.
func PrintDefaults(e *Env, fs *flag.FlagSet) {
	w := fs.Output()
	fs.VisitAll(func(f *flag.Flag) {
		typ, use := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if env := e.EnvName(f.Name); env != "" {
			line += "  (" + env + ")"
		}
		fmt.Fprintln(w, line)
		use = strings.ReplaceAll(use, "\n", "\n    \t")
		switch {
		case f.DefValue == "" || f.DefValue == "false" || f.DefValue == "0" || f.DefValue == "0s":
		case typ == "string":
			use += fmt.Sprintf(" (default %q)", f.DefValue)
		default:
			use += " (default " + f.DefValue + ")"
		}
		fmt.Fprintf(w, "    \t%s\n", use)
	})
}

// SetEnvName sets the environment variable of a command's flag name (""
// for none), in place of ASKD_<NAME>.
func (e *Env) SetEnvName(name, variable string) {
	if e.envNames == nil {
		e.envNames = map[string]string{}
	}
	e.envNames[name] = variable
}

// EnvName is the environment variable that sets flag name ("" for none):
// ASKD_<NAME> unless the command said otherwise (SetEnvName).
func (e *Env) EnvName(name string) string {
	if v, ok := e.envNames[name]; ok {
		return v
	}
	return "ASKD_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// Parse applies ASKD_* environment variables as defaults, then the
// arguments. Flags may come before, between or after the positional
// arguments, and "--" ends them: fs.Args() holds the positional ones in
// order. A mistake is a usageError of one line; -h prints the usage on
// stdout and returns flag.ErrHelp (exit 0).
func Parse(e *Env, fs *flag.FlagSet, args []string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		name := e.EnvName(f.Name)
		if name == "" {
			return
		}
		if v := e.Getenv(name); v != "" && err == nil {
			if serr := fs.Set(f.Name, v); serr != nil {
				err = UsageError(fmt.Sprintf("%s: %v", name, serr))
			}
		}
	})
	if err != nil {
		return err
	}
	var flagArgs, positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			positional = append(positional, args[i+1:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flagArgs = append(flagArgs, a)
			if NeedsValue(fs, a) {
				if i+1 == len(args) { // else "--" below would be its value
					return UsageError(fmt.Sprintf("%s: --%s needs a value (askd %s -h lists its flags)", fs.Name(), strings.TrimLeft(a, "-"), fs.Name()))
				}
				flagArgs = append(flagArgs, args[i+1])
				i++
			}
		default:
			positional = append(positional, a)
		}
	}
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err = fs.Parse(append(append(flagArgs, "--"), positional...))
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(e.Stdout)
		fs.Usage()
		fs.SetOutput(out)
		return err
	}
	if err != nil {
		return UsageError(fmt.Sprintf("%s: %s (askd %s -h lists its flags)", fs.Name(), flagError(fs, err), fs.Name()))
	}
	return nil
}

// flagErrors match the flag package's messages, which flagError rewords.
var (
	undefinedFlag = regexp.MustCompile(`^flag provided but not defined: -+(.*)$`)
	flagNoValue   = regexp.MustCompile(`^flag needs an argument: -+(.*)$`)
	badFlagValue  = regexp.MustCompile(`^invalid (?:boolean )?value "(.*)" for (?:flag )?-+([^:]*): `)
)

// flagError is a flag package error in askd's words: flags written with two
// dashes, as askd's help writes them, and a bad value named for its type.
func flagError(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if m := undefinedFlag.FindStringSubmatch(msg); m != nil {
		if len(m[1]) == 1 {
			return fmt.Sprintf("unknown flag -%s", m[1])
		}
		return fmt.Sprintf("unknown flag --%s", m[1])
	}
	if m := flagNoValue.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("--%s needs a value", m[1])
	}
	if m := badFlagValue.FindStringSubmatch(msg); m != nil {
		want := "a valid value"
		if f := fs.Lookup(m[2]); f != nil {
			switch typ, _ := flag.UnquoteUsage(f); typ {
			case "duration":
				want = "a duration such as 30s, 5m or 2h"
			case "int", "uint":
				want = "a whole number"
			case "":
				want = "true or false"
			default:
				// A Set method's own error says what it wants.
				if _, why, ok := strings.Cut(msg, m[0]); ok && why != "" {
					want = why
				} else if i := strings.LastIndex(msg, ": "); i >= 0 {
					want = msg[i+2:]
				}
				return fmt.Sprintf("--%s %q: %s", m[2], m[1], want)
			}
		}
		return fmt.Sprintf("--%s: %q is not %s", m[2], m[1], want)
	}
	return msg
}

// NeedsValue reports whether arg is a flag that takes the next argument.
func NeedsValue(fs *flag.FlagSet, arg string) bool {
	name := strings.TrimLeft(arg, "-")
	if strings.Contains(name, "=") {
		return false
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return false
	}
	return true
}

// ExitCode is the exit status err carries: 0 for none (or -h), an
// ExitStatus's own, 2 for a UsageError or an error with an ExitCode method
// saying 2 (one that could not read its input, say), else 1.
func ExitCode(err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var s ExitStatus
	if errors.As(err, &s) {
		return int(s)
	}
	var u UsageError
	if errors.As(err, &u) {
		return 2
	}
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return 1
}

// ExitStatus ends askd with that status, saying nothing more: the command
// said what it had to itself (askd gate run, whose status is often its
// command's).
type ExitStatus int

func (s ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(s)) }

// UsageError is a mistake in the command line (exit status 2).
type UsageError string

func (u UsageError) Error() string { return string(u) }

// Subcommand splits args of `askd cmd` into the subcommand, one of names,
// and the rest. -h (and --help, help) prints usage and gives sub "": the
// caller returns nil. No subcommand, or one not among names, is a
// usageError naming them.
func Subcommand(e *Env, cmd, usage string, args []string, names ...string) (sub string, rest []string, err error) {
	list := strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	if len(args) == 0 {
		return "", nil, UsageError(fmt.Sprintf("%s: say %s (askd %s -h)", cmd, list, cmd))
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprintln(e.Stdout, strings.TrimRight(usage, "\n"))
		return "", nil, nil
	}
	if !slices.Contains(names, args[0]) {
		return "", nil, UsageError(fmt.Sprintf("%s: %q is not %s (askd %s -h)", cmd, args[0], list, cmd))
	}
	return args[0], args[1:], nil
}
