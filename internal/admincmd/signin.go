package admincmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/cli"
	"github.com/askd-dev/askd/internal/openstore"
)

// SignInLink is askd signin-link: a one-time link that signs a browser in
// as a human token of the database --db names.
func SignInLink(ctx context.Context, e *cli.Env, args []string) error {
	fs := cli.Flags(e, "signin-link", "[--db PATH|URL] [--human NAME] [--url URL]")
	db := fs.String("db", "./askd.db", "database: a SQLite file, or a postgres:// URL")
	human := fs.String("human", "", "the human token to sign in as (default: the only human token)")
	base := fs.String("url", "http://127.0.0.1:7777", "the inbox's URL as the browser reaches it (askd serve's --public-url)")
	asJSON := fs.Bool("json", false, "print JSON")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: askd signin-link [--db PATH|URL] [--human NAME] [--url URL]\n\n"+
			"Prints a link that signs a browser in to the inbox as a human token. The link\n"+
			"works once, within %d minutes; it carries a one-time code, never the token.\n"+
			"It works on the database directly, like askd token: no server is asked.\n\n"+
			"Flags (each also the environment variable named after it):\n", int(app.SignInCodeTTL/time.Minute))
		cli.PrintDefaults(e, fs)
	}
	if err := cli.Parse(e, fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return cli.UsageError(fmt.Sprintf("signin-link: unexpected argument %q", fs.Arg(0)))
	}
	u, err := url.Parse(*base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return cli.UsageError(fmt.Sprintf("--url: %q is not an http(s) URL such as http://127.0.0.1:7777", *base))
	}
	svc, done, err := openApp(ctx, *db)
	if err != nil {
		return err
	}
	defer done()
	code, made, err := svc.CreateSignInCode(ctx, localAdmin(), *human)
	if err != nil {
		return err
	}
	link := SignInURL(*base, code)
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(map[string]any{"human": made.Human, "url": link, "expires_at": made.ExpiresAt.UTC()})
	}
	fmt.Fprintf(e.Stdout, "Sign in as %q (works once, until %s):\n%s\n", made.Human, made.ExpiresAt.Local().Format("15:04"), link)
	return nil
}

// SignInURL is the inbox's sign-in URL at base with code.
func SignInURL(base, code string) string {
	return strings.TrimRight(base, "/") + "/signin?code=" + url.QueryEscape(code)
}

// SignInLinkCommand is the askd signin-link command line for a server on db
// at base, as askd serve suggests it on a first start: flags only where they differ from the
// defaults, and never a PostgreSQL URL, which may hold a password.
func SignInLinkCommand(db, base string) string {
	cmd := "askd signin-link"
	switch {
	case openstore.IsPostgres(db):
		cmd += " --db postgres://..."
	case db != "./askd.db":
		cmd += " --db " + db
	}
	if base != "http://127.0.0.1:7777" {
		cmd += " --url " + base
	}
	return cmd
}
