package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/askd-dev/askd"
)

// teamColumns are a team's columns, its members last, sorted by bytes
// (COLLATE "C", as SQLite sorts), whatever the database's locale.
const teamColumns = `name, escalate_after, escalate_to, created_at,
	ARRAY(SELECT person FROM team_members WHERE team = teams.name ORDER BY person COLLATE "C")`

// CreateTeam stores tm without its members; ECONFLICT when its name is taken.
func (t *tx) CreateTeam(ctx context.Context, tm *askd.Team) error {
	if err := t.mustWrite("create team"); err != nil {
		return err
	}
	_, err := t.tx.Exec(t.ctx(ctx),
		"INSERT INTO teams (name, escalate_after, escalate_to, created_at) VALUES ($1, $2, $3, $4)",
		tm.Name, tm.EscalateAfter, tm.EscalateTo, tm.CreatedAt)
	if uniqueViolation(err) {
		return askd.Errorf(askd.ECONFLICT, "team %q exists", tm.Name)
	}
	return translate(err, fmt.Sprintf("create team %q", tm.Name))
}

// Team returns the team named name with its members; ENOTFOUND when there
// is none.
func (t *tx) Team(ctx context.Context, name string) (*askd.Team, error) {
	tm, err := scanTeam(t.tx.QueryRow(t.ctx(ctx), "SELECT "+teamColumns+" FROM teams WHERE name = $1", name))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, askd.Errorf(askd.ENOTFOUND, "team %q not found", name)
	}
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read team %q", name))
	}
	return tm, nil
}

// Teams returns every team with its members, by name.
func (t *tx) Teams(ctx context.Context) ([]*askd.Team, error) {
	rows, err := t.tx.Query(t.ctx(ctx), "SELECT "+teamColumns+` FROM teams ORDER BY name COLLATE "C"`)
	return collect(rows, err, "list teams", func(row pgx.CollectableRow) (*askd.Team, error) { return scanTeam(row) })
}

// TeamsOf returns the names of the teams person is a member of, sorted.
func (t *tx) TeamsOf(ctx context.Context, person string) ([]string, error) {
	rows, err := t.tx.Query(t.ctx(ctx), `SELECT team FROM team_members WHERE person = $1 ORDER BY team COLLATE "C"`, person)
	return collect(rows, err, fmt.Sprintf("list the teams of %q", person), pgx.RowTo[string])
}

// SetEscalation sets team name's escalation; ENOTFOUND when there is none.
func (t *tx) SetEscalation(ctx context.Context, name string, after time.Duration, to string) error {
	if err := t.mustWrite("set escalation"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "UPDATE teams SET escalate_after = $1, escalate_to = $2 WHERE name = $3", after, to, name)
	if err != nil {
		return translate(err, fmt.Sprintf("set the escalation of team %q", name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "team %q not found", name)
	}
	return nil
}

// addMembers adds $2, a list of people, to team $1 unless one of them is
// not a human token's name, in one statement: it returns whether the team
// exists, and the first of the people missing, empty when none is.
const addMembers = `
	WITH team AS (SELECT name FROM teams WHERE name = $1),
	missing AS (
		SELECT p FROM unnest($2::text[]) WITH ORDINALITY AS given (p, i)
		WHERE p NOT IN (SELECT name FROM tokens WHERE role = 'human')
		ORDER BY i LIMIT 1
	),
	added AS (
		INSERT INTO team_members (team, person)
		SELECT team.name, p FROM team, unnest($2::text[]) AS p
		WHERE NOT EXISTS (SELECT 1 FROM missing)
		ON CONFLICT (team, person) DO NOTHING
	)
	SELECT EXISTS (SELECT 1 FROM team), COALESCE((SELECT p FROM missing), '')`

// AddMembers adds people to team name, those in it already staying;
// ENOTFOUND when there is no such team, or no human token named one of
// people (nothing is added then).
func (t *tx) AddMembers(ctx context.Context, name string, people []string) error {
	if err := t.mustWrite("add members"); err != nil {
		return err
	}
	var (
		team    bool
		missing string
	)
	err := t.tx.QueryRow(t.ctx(ctx), addMembers, name, people).Scan(&team, &missing)
	switch {
	case foreignKeyViolation(err):
		// Not expected: missing keeps the insert from naming anyone not there.
		return askd.Errorf(askd.ENOTFOUND, "team %q or one of %q not found", name, people)
	case err != nil:
		return translate(err, fmt.Sprintf("add members to team %q", name))
	case !team:
		return askd.Errorf(askd.ENOTFOUND, "team %q not found", name)
	case missing != "":
		return askd.Errorf(askd.ENOTFOUND, "no person (human token) named %q", missing)
	}
	return nil
}

// RemoveMember takes person out of team name; ENOTFOUND when the team has
// no such member.
func (t *tx) RemoveMember(ctx context.Context, name, person string) error {
	if err := t.mustWrite("remove member"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM team_members WHERE team = $1 AND person = $2", name, person)
	if err != nil {
		return translate(err, fmt.Sprintf("remove %q from team %q", person, name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "team %q has no member %q", name, person)
	}
	return nil
}

// DeleteTeam deletes team name and, by cascade, its memberships; ENOTFOUND
// when there is none.
func (t *tx) DeleteTeam(ctx context.Context, name string) error {
	if err := t.mustWrite("delete team"); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM teams WHERE name = $1", name)
	if err != nil {
		return translate(err, fmt.Sprintf("delete team %q", name))
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "team %q not found", name)
	}
	return nil
}

// scanTeam reads one row of teamColumns.
func scanTeam(row pgx.Row) (*askd.Team, error) {
	var tm askd.Team
	if err := row.Scan(&tm.Name, &tm.EscalateAfter, &tm.EscalateTo, &tm.CreatedAt, &tm.Members); err != nil {
		return nil, err
	}
	tm.CreatedAt = tm.CreatedAt.UTC()
	return &tm, nil
}

// SetNotify replaces n.Person's notification settings; with none
// (askd.PersonNotify.None), none are kept. ENOTFOUND when a field is set and there is no human
// token named n.Person.
func (t *tx) SetNotify(ctx context.Context, n *askd.PersonNotify) error {
	if err := t.mustWrite("set notify"); err != nil {
		return err
	}
	what := fmt.Sprintf("set the notifications of %q", n.Person)
	if n.None() {
		_, err := t.tx.Exec(t.ctx(ctx), "DELETE FROM people_notify WHERE person = $1", n.Person)
		return translate(err, what)
	}
	tag, err := t.tx.Exec(t.ctx(ctx), `INSERT INTO people_notify (person, ntfy, webhook, webhook_secret, email, provider_email)
		SELECT name, $2, $3, $4, $5, $6 FROM tokens WHERE name = $1 AND role = 'human'
		ON CONFLICT (person) DO UPDATE SET ntfy = EXCLUDED.ntfy, webhook = EXCLUDED.webhook, webhook_secret = EXCLUDED.webhook_secret,
			email = EXCLUDED.email, provider_email = EXCLUDED.provider_email`,
		n.Person, n.Ntfy, n.Webhook, n.WebhookSecret, n.Email, n.ProviderEmail)
	if err != nil {
		return translate(err, what)
	}
	if tag.RowsAffected() == 0 {
		return askd.Errorf(askd.ENOTFOUND, "no person (human token) named %q", n.Person)
	}
	return nil
}

// Notify returns person's notification settings, the zero value with
// Person set when there are none.
func (t *tx) Notify(ctx context.Context, person string) (*askd.PersonNotify, error) {
	n := &askd.PersonNotify{Person: person}
	// An aggregate, so that there is a row (of '') when the person has none.
	err := t.tx.QueryRow(t.ctx(ctx), "SELECT COALESCE(max(ntfy), ''), COALESCE(max(webhook), ''), COALESCE(max(webhook_secret), ''), max(email), COALESCE(max(provider_email), '') FROM people_notify WHERE person = $1",
		person).Scan(&n.Ntfy, &n.Webhook, &n.WebhookSecret, &n.Email, &n.ProviderEmail)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read the notifications of %q", person))
	}
	return n, nil
}

// NotifyAll returns the notification settings of everyone who has any, by
// person.
func (t *tx) NotifyAll(ctx context.Context) ([]*askd.PersonNotify, error) {
	rows, err := t.tx.Query(t.ctx(ctx), `SELECT person, ntfy, webhook, webhook_secret, email, provider_email FROM people_notify ORDER BY person COLLATE "C"`)
	return collect(rows, err, "list notifications", func(row pgx.CollectableRow) (*askd.PersonNotify, error) {
		var n askd.PersonNotify
		err := row.Scan(&n.Person, &n.Ntfy, &n.Webhook, &n.WebhookSecret, &n.Email, &n.ProviderEmail)
		return &n, err
	})
}

// collect reads every row of rows with scan, an empty list for none; err is
// the query's own error, and what names the read in errors.
func collect[T any](rows pgx.Rows, err error, what string, scan pgx.RowToFunc[T]) ([]T, error) {
	if err != nil {
		return nil, translate(err, what)
	}
	out, err := pgx.CollectRows(rows, scan)
	if err != nil {
		return nil, translate(err, what)
	}
	if out == nil {
		out = []T{}
	}
	return out, nil
}
