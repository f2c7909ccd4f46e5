package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/askd-dev/askd"
)

// teamColumns are a team's columns, its members last as a JSON list, sorted.
const teamColumns = `name, escalate_after, escalate_to, created_at,
	(SELECT json_group_array(person ORDER BY person) FROM team_members WHERE team = teams.name)`

// CreateTeam stores tm without its members; ECONFLICT when its name is taken.
func (t *tx) CreateTeam(ctx context.Context, tm *askd.Team) error {
	if err := t.mustWrite("create team"); err != nil {
		return err
	}
	_, err := t.tx.ExecContext(ctx,
		"INSERT INTO teams (name, escalate_after, escalate_to, created_at) VALUES (?, ?, ?, ?)",
		tm.Name, tm.EscalateAfter.Microseconds(), tm.EscalateTo, micros(tm.CreatedAt))
	return translate(err, fmt.Sprintf("create team %q", tm.Name), says{taken: fmt.Sprintf("team %q exists", tm.Name)})
}

// Team returns the team named name with its members; ENOTFOUND when there
// is none.
func (t *tx) Team(ctx context.Context, name string) (*askd.Team, error) {
	row := t.tx.QueryRowContext(ctx, "SELECT "+teamColumns+" FROM teams WHERE name = ?", name)
	tm, err := scanTeam(row)
	if err != nil {
		return nil, translate(err, fmt.Sprintf("read team %q", name), says{notFound: fmt.Sprintf("team %q not found", name)})
	}
	return tm, nil
}

// Teams returns every team with its members, by name.
func (t *tx) Teams(ctx context.Context) ([]*askd.Team, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT "+teamColumns+" FROM teams ORDER BY name")
	return collect(rows, err, "list teams", scanTeam)
}

// TeamsOf returns the names of the teams person is a member of, sorted.
func (t *tx) TeamsOf(ctx context.Context, person string) ([]string, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT team FROM team_members WHERE person = ? ORDER BY team", person)
	return collect(rows, err, fmt.Sprintf("list the teams of %q", person), func(row scanner) (string, error) {
		var team string
		err := row.Scan(&team)
		return team, err
	})
}

// SetEscalation sets team name's escalation; ENOTFOUND when there is none.
func (t *tx) SetEscalation(ctx context.Context, name string, after time.Duration, to string) error {
	if err := t.mustWrite("set escalation"); err != nil {
		return err
	}
	what := fmt.Sprintf("set the escalation of team %q", name)
	res, err := t.tx.ExecContext(ctx, "UPDATE teams SET escalate_after = ?, escalate_to = ? WHERE name = ?",
		after.Microseconds(), to, name)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return oneRow(res, what, fmt.Sprintf("team %q not found", name))
}

// AddMembers adds people to team name, those in it already staying;
// ENOTFOUND when there is no such team, or no human token named one of
// people (nothing is added then).
func (t *tx) AddMembers(ctx context.Context, name string, people []string) error {
	if err := t.mustWrite("add members"); err != nil {
		return err
	}
	what := fmt.Sprintf("add members to team %q", name)
	list := jsonList(people)
	var (
		team    bool
		missing sql.NullString
	)
	err := t.tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM teams WHERE name = ?),
		(SELECT value FROM json_each(?) WHERE value NOT IN (SELECT name FROM tokens WHERE role = 'human') ORDER BY key LIMIT 1)`,
		name, list).Scan(&team, &missing)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", what, err)
	case !team:
		return askd.Errorf(askd.ENOTFOUND, "team %q not found", name)
	case missing.Valid:
		return askd.Errorf(askd.ENOTFOUND, "no person (human token) named %q", missing.String)
	}
	// WHERE true: SQLite would read ON CONFLICT as part of a join otherwise.
	_, err = t.tx.ExecContext(ctx, `INSERT INTO team_members (team, person)
		SELECT ?, value FROM json_each(?) WHERE true ON CONFLICT (team, person) DO NOTHING`, name, list)
	return translate(err, what, says{missing: fmt.Sprintf("team %q or one of %q not found", name, people)})
}

// RemoveMember takes person out of team name; ENOTFOUND when the team has
// no such member.
func (t *tx) RemoveMember(ctx context.Context, name, person string) error {
	if err := t.mustWrite("remove member"); err != nil {
		return err
	}
	what := fmt.Sprintf("remove %q from team %q", person, name)
	res, err := t.tx.ExecContext(ctx, "DELETE FROM team_members WHERE team = ? AND person = ?", name, person)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return oneRow(res, what, fmt.Sprintf("team %q has no member %q", name, person))
}

// DeleteTeam deletes team name and, by cascade, its memberships; ENOTFOUND
// when there is none.
func (t *tx) DeleteTeam(ctx context.Context, name string) error {
	if err := t.mustWrite("delete team"); err != nil {
		return err
	}
	what := fmt.Sprintf("delete team %q", name)
	res, err := t.tx.ExecContext(ctx, "DELETE FROM teams WHERE name = ?", name)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return oneRow(res, what, fmt.Sprintf("team %q not found", name))
}

// scanTeam reads one row of teamColumns.
func scanTeam(row scanner) (*askd.Team, error) {
	var (
		tm               askd.Team
		after, createdAt int64
		members          string
	)
	if err := row.Scan(&tm.Name, &after, &tm.EscalateTo, &createdAt, &members); err != nil {
		return nil, err
	}
	tm.EscalateAfter = time.Duration(after) * time.Microsecond
	tm.CreatedAt = fromMicros(createdAt)
	if err := json.Unmarshal([]byte(members), &tm.Members); err != nil {
		return nil, fmt.Errorf("team %q members: %w", tm.Name, err)
	}
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
		_, err := t.tx.ExecContext(ctx, "DELETE FROM people_notify WHERE person = ?", n.Person)
		return translate(err, what, says{})
	}
	res, err := t.tx.ExecContext(ctx, `INSERT INTO people_notify (person, ntfy, webhook, webhook_secret, email, provider_email)
		SELECT name, ?, ?, ?, ?, ? FROM tokens WHERE name = ? AND role = 'human'
		ON CONFLICT (person) DO UPDATE SET ntfy = excluded.ntfy, webhook = excluded.webhook, webhook_secret = excluded.webhook_secret,
			email = excluded.email, provider_email = excluded.provider_email`,
		n.Ntfy, n.Webhook, n.WebhookSecret, n.Email, n.ProviderEmail, n.Person)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return oneRow(res, what, fmt.Sprintf("no person (human token) named %q", n.Person))
}

// Notify returns person's notification settings, the zero value with
// Person set when there are none.
func (t *tx) Notify(ctx context.Context, person string) (*askd.PersonNotify, error) {
	n := &askd.PersonNotify{Person: person}
	// An aggregate, so that there is a row (of '') when the person has none.
	err := t.tx.QueryRowContext(ctx, "SELECT COALESCE(MAX(ntfy), ''), COALESCE(MAX(webhook), ''), COALESCE(MAX(webhook_secret), ''), MAX(email), COALESCE(MAX(provider_email), '') FROM people_notify WHERE person = ?",
		person).Scan(&n.Ntfy, &n.Webhook, &n.WebhookSecret, &n.Email, &n.ProviderEmail)
	if err != nil {
		return nil, fmt.Errorf("read the notifications of %q: %w", person, err)
	}
	return n, nil
}

// NotifyAll returns the notification settings of everyone who has any, by
// person.
func (t *tx) NotifyAll(ctx context.Context) ([]*askd.PersonNotify, error) {
	rows, err := t.tx.QueryContext(ctx, "SELECT person, ntfy, webhook, webhook_secret, email, provider_email FROM people_notify ORDER BY person")
	return collect(rows, err, "list notifications", func(row scanner) (*askd.PersonNotify, error) {
		var n askd.PersonNotify
		err := row.Scan(&n.Person, &n.Ntfy, &n.Webhook, &n.WebhookSecret, &n.Email, &n.ProviderEmail)
		return &n, err
	})
}
