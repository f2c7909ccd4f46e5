package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// people stores a human token for each name, and an agent token "ci".
func people(t *testing.T, s askd.Store, names ...string) {
	t.Helper()
	update(t, s, func(tx askd.Tx) error {
		for _, name := range names {
			tok := &askd.Token{Name: name, Role: askd.RoleHuman, Access: askd.AccessApprover, Hash: hash(name), CreatedAt: at(0)}
			if err := tx.Tokens.CreateToken(t.Context(), tok); err != nil {
				return err
			}
		}
		return tx.Tokens.CreateToken(t.Context(), &askd.Token{Name: "ci", Role: askd.RoleAgent, Hash: hash("ci"), CreatedAt: at(0)})
	})
}

// readTeam reads team name, failing the test on error.
func readTeam(t *testing.T, s askd.Store, name string) *askd.Team {
	t.Helper()
	var tm *askd.Team
	view(t, s, func(tx askd.Tx) (err error) {
		tm, err = tx.Teams.Team(t.Context(), name)
		return err
	})
	return tm
}

// checkTeam fails the test unless got is want as stored.
func checkTeam(t *testing.T, got, want *askd.Team) {
	t.Helper()
	if got.Name != want.Name || got.EscalateAfter != want.EscalateAfter || got.EscalateTo != want.EscalateTo {
		t.Errorf("team = %s/%s/%q, want %s/%s/%q", got.Name, got.EscalateAfter, got.EscalateTo, want.Name, want.EscalateAfter, want.EscalateTo)
	}
	if got.Members == nil || !slices.Equal(got.Members, want.Members) {
		t.Errorf("team %s members = %#v, want %q", want.Name, got.Members, want.Members)
	}
	checkTime(t, "team "+want.Name+" created_at", got.CreatedAt, want.CreatedAt)
}

// teamsOf reads the teams person is a member of.
func teamsOf(t *testing.T, s askd.Store, person string) []string {
	t.Helper()
	var names []string
	view(t, s, func(tx askd.Tx) (err error) {
		names, err = tx.Teams.TeamsOf(t.Context(), person)
		return err
	})
	return names
}

// testTeams: teams round-trip with their members sorted by bytes, members
// are added once and must be people, and memberships go with their team
// and with the person's token.
func testTeams(t *testing.T, s askd.Store) {
	ctx := t.Context()
	people(t, s, "alice", "bob", "carol", "Dave")
	platform := &askd.Team{Name: "platform", EscalateAfter: 10 * time.Minute, EscalateTo: "carol", CreatedAt: at(0)}
	ops := &askd.Team{Name: "ops", CreatedAt: at(time.Second)}
	qa := &askd.Team{Name: "QA", EscalateAfter: 90 * time.Second, EscalateTo: "team:ops", CreatedAt: at(2 * time.Second)}
	update(t, s, func(tx askd.Tx) error {
		for _, tm := range []*askd.Team{platform, ops, qa} {
			if err := tx.Teams.CreateTeam(ctx, tm); err != nil {
				return err
			}
		}
		if err := tx.Teams.AddMembers(ctx, "platform", []string{"carol", "alice", "Dave", "bob"}); err != nil {
			return err
		}
		return tx.Teams.AddMembers(ctx, "ops", []string{"bob"})
	})
	platform.Members = []string{"Dave", "alice", "bob", "carol"} // by bytes
	ops.Members, qa.Members = []string{"bob"}, []string{}

	t.Run("read", func(t *testing.T) {
		for _, want := range []*askd.Team{platform, ops, qa} {
			checkTeam(t, readTeam(t, s, want.Name), want)
		}
	})
	t.Run("list by name", func(t *testing.T) {
		view(t, s, func(tx askd.Tx) error {
			got, err := tx.Teams.Teams(ctx)
			if err != nil {
				return err
			}
			if len(got) != 3 {
				t.Fatalf("Teams = %d, want 3", len(got))
			}
			for i, want := range []*askd.Team{qa, ops, platform} { // by bytes
				checkTeam(t, got[i], want)
			}
			return nil
		})
	})
	t.Run("teams of a person", func(t *testing.T) {
		if got := teamsOf(t, s, "bob"); !slices.Equal(got, []string{"ops", "platform"}) {
			t.Errorf("TeamsOf(bob) = %q, want ops and platform", got)
		}
		if got := teamsOf(t, s, "nobody"); got == nil || len(got) != 0 {
			t.Errorf("TeamsOf(nobody) = %#v, want an empty list", got)
		}
	})
	t.Run("members added again stay once", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Teams.AddMembers(ctx, "platform", []string{"alice", "alice"}) })
		checkTeam(t, readTeam(t, s, "platform"), platform)
		update(t, s, func(tx askd.Tx) error { return tx.Teams.AddMembers(ctx, "platform", nil) })
		checkTeam(t, readTeam(t, s, "platform"), platform)
	})
	t.Run("escalation", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Teams.SetEscalation(ctx, "ops", 5*time.Minute, "team:platform") })
		ops.EscalateAfter, ops.EscalateTo = 5*time.Minute, "team:platform"
		checkTeam(t, readTeam(t, s, "ops"), ops)
		update(t, s, func(tx askd.Tx) error { return tx.Teams.SetEscalation(ctx, "QA", 0, "") })
		qa.EscalateAfter, qa.EscalateTo = 0, ""
		checkTeam(t, readTeam(t, s, "QA"), qa)
	})

	for _, c := range []struct {
		name  string
		write bool
		code  string
		do    func(tx askd.Tx) error
	}{
		{"read a team not there", false, askd.ENOTFOUND, func(tx askd.Tx) error {
			tm, err := tx.Teams.Team(ctx, "nobody")
			if tm != nil {
				t.Errorf("Team returned %+v with the error", tm)
			}
			return err
		}},
		{"create a team of a name taken", true, askd.ECONFLICT, func(tx askd.Tx) error {
			return tx.Teams.CreateTeam(ctx, &askd.Team{Name: "platform", CreatedAt: at(time.Hour)})
		}},
		{"escalation of a team not there", true, askd.ENOTFOUND, func(tx askd.Tx) error {
			return tx.Teams.SetEscalation(ctx, "nobody", time.Minute, "alice")
		}},
		{"add to a team not there", true, askd.ENOTFOUND, func(tx askd.Tx) error { return tx.Teams.AddMembers(ctx, "nobody", []string{"alice"}) }},
		{"add someone without a token", true, askd.ENOTFOUND, func(tx askd.Tx) error {
			return tx.Teams.AddMembers(ctx, "ops", []string{"alice", "nobody"})
		}},
		{"add an agent", true, askd.ENOTFOUND, func(tx askd.Tx) error { return tx.Teams.AddMembers(ctx, "ops", []string{"ci"}) }},
		{"remove someone not a member", true, askd.ENOTFOUND, func(tx askd.Tx) error { return tx.Teams.RemoveMember(ctx, "ops", "alice") }},
		{"remove from a team not there", true, askd.ENOTFOUND, func(tx askd.Tx) error { return tx.Teams.RemoveMember(ctx, "nobody", "bob") }},
		{"delete a team not there", true, askd.ENOTFOUND, func(tx askd.Tx) error { return tx.Teams.DeleteTeam(ctx, "nobody") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := s.View
			if c.write {
				run = s.Update
			}
			wantCode(t, run(ctx, c.do), c.code)
			for _, want := range []*askd.Team{platform, ops, qa} {
				checkTeam(t, readTeam(t, s, want.Name), want)
			}
		})
	}

	t.Run("remove a member", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Teams.RemoveMember(ctx, "platform", "bob") })
		platform.Members = []string{"Dave", "alice", "carol"}
		checkTeam(t, readTeam(t, s, "platform"), platform)
		if got := teamsOf(t, s, "bob"); !slices.Equal(got, []string{"ops"}) {
			t.Errorf("TeamsOf(bob) after leaving platform = %q, want ops", got)
		}
	})
	t.Run("memberships go with the person's token", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "Dave") })
		platform.Members = []string{"alice", "carol"}
		checkTeam(t, readTeam(t, s, "platform"), platform)
	})
	t.Run("delete a team", func(t *testing.T) {
		update(t, s, func(tx askd.Tx) error { return tx.Teams.DeleteTeam(ctx, "ops") })
		err := s.View(ctx, func(tx askd.Tx) error {
			_, err := tx.Teams.Team(ctx, "ops")
			return err
		})
		wantCode(t, err, askd.ENOTFOUND)
		if got := teamsOf(t, s, "bob"); len(got) != 0 {
			t.Errorf("TeamsOf(bob) after deleting ops = %q, want none", got)
		}
		// Its memberships went with it: a new team of the name has none.
		again := &askd.Team{Name: "ops", CreatedAt: at(time.Hour), Members: []string{}}
		update(t, s, func(tx askd.Tx) error { return tx.Teams.CreateTeam(ctx, again) })
		checkTeam(t, readTeam(t, s, "ops"), again)
	})
}

// testNotifySettings: a person's notification settings are replaced whole,
// kept only while one is set, listed by person, must be a person's, and go
// with the person's token.
func testNotifySettings(t *testing.T, s askd.Store) {
	ctx := t.Context()
	people(t, s, "alice", "bob")
	read := func(t *testing.T, person string) *askd.PersonNotify {
		t.Helper()
		var n *askd.PersonNotify
		view(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.Teams.Notify(ctx, person)
			return err
		})
		return n
	}
	all := func(t *testing.T) []askd.PersonNotify {
		t.Helper()
		var got []askd.PersonNotify
		view(t, s, func(tx askd.Tx) error {
			ns, err := tx.Teams.NotifyAll(ctx)
			if err != nil {
				return err
			}
			if ns == nil {
				t.Error("NotifyAll = nil, want a list")
			}
			for _, n := range ns {
				got = append(got, *n)
			}
			return nil
		})
		return got
	}
	set := func(t *testing.T, n askd.PersonNotify) {
		t.Helper()
		update(t, s, func(tx askd.Tx) error { return tx.Teams.SetNotify(ctx, &n) })
	}

	if got := read(t, "alice"); *got != (askd.PersonNotify{Person: "alice"}) {
		t.Errorf("Notify before any = %+v, want none", got)
	}
	if got := all(t); len(got) != 0 {
		t.Errorf("NotifyAll before any = %+v, want none", got)
	}

	alice := askd.PersonNotify{Person: "alice", Ntfy: "https://ntfy.example/alice"}
	bob := askd.PersonNotify{Person: "bob", Ntfy: "https://ntfy.example/bob", Webhook: "https://hooks.example/bob", WebhookSecret: "bob's secret"}
	set(t, alice)
	set(t, bob)
	if got := read(t, "alice"); *got != alice {
		t.Errorf("Notify = %+v, want %+v", got, alice)
	}
	// Replaced whole: the ntfy topic goes.
	alice = askd.PersonNotify{Person: "alice", Webhook: "https://hooks.example/alice"}
	set(t, alice)
	if got := read(t, "alice"); *got != alice {
		t.Errorf("Notify after replacing = %+v, want %+v", got, alice)
	}
	if got, want := all(t), []askd.PersonNotify{alice, bob}; !slices.Equal(got, want) {
		t.Errorf("NotifyAll = %+v, want %+v", got, want)
	}

	for _, person := range []string{"nobody", "ci"} {
		err := s.Update(ctx, func(tx askd.Tx) error {
			return tx.Teams.SetNotify(ctx, &askd.PersonNotify{Person: person, Ntfy: "https://ntfy.example/x"})
		})
		wantCode(t, err, askd.ENOTFOUND)
	}

	set(t, askd.PersonNotify{Person: "alice"})
	if got := read(t, "alice"); *got != (askd.PersonNotify{Person: "alice"}) {
		t.Errorf("Notify after clearing = %+v, want none", got)
	}
	if got, want := all(t), []askd.PersonNotify{bob}; !slices.Equal(got, want) {
		t.Errorf("NotifyAll after clearing alice's = %+v, want %+v", got, want)
	}
	update(t, s, func(tx askd.Tx) error { return tx.Tokens.RevokeToken(ctx, "bob") })
	if got := all(t); len(got) != 0 {
		t.Errorf("NotifyAll after revoking bob = %+v, want none", got)
	}
}

// testNotifyEmail: a person's email is kept apart from no choice (nil) and
// a choice of none (""), and each of those, like a provider's address
// alone, keeps a row (SPEC §16).
func testNotifyEmail(t *testing.T, s askd.Store) {
	ctx := t.Context()
	people(t, s, "alice", "bob", "carol")
	read := func(t *testing.T, person string) askd.PersonNotify {
		t.Helper()
		var n *askd.PersonNotify
		view(t, s, func(tx askd.Tx) (err error) {
			n, err = tx.Teams.Notify(ctx, person)
			return err
		})
		return *n
	}
	set := func(t *testing.T, n askd.PersonNotify) {
		t.Helper()
		update(t, s, func(tx askd.Tx) error { return tx.Teams.SetNotify(ctx, &n) })
	}
	email := func(s string) *string { return &s }
	same := func(a, b askd.PersonNotify) bool {
		return a.Person == b.Person && a.Ntfy == b.Ntfy && a.Webhook == b.Webhook && a.ProviderEmail == b.ProviderEmail &&
			(a.Email == nil) == (b.Email == nil) && (a.Email == nil || *a.Email == *b.Email)
	}
	cases := []askd.PersonNotify{
		{Person: "alice", Email: email("alice@example.com")},
		{Person: "bob", Email: email("")},                      // a choice of none
		{Person: "carol", ProviderEmail: "carol@corp.example"}, // the provider's, no choice
	}
	for _, n := range cases {
		set(t, n)
		if got := read(t, n.Person); !same(got, n) {
			t.Errorf("Notify(%s) = %+v (email %v), want %+v", n.Person, got, got.Email, n)
		}
	}
	var listed []*askd.PersonNotify
	view(t, s, func(tx askd.Tx) (err error) {
		listed, err = tx.Teams.NotifyAll(ctx)
		return err
	})
	if len(listed) != len(cases) {
		t.Fatalf("NotifyAll = %d settings, want %d", len(listed), len(cases))
	}
	for i, n := range listed {
		if !same(*n, cases[i]) {
			t.Errorf("NotifyAll[%d] = %+v, want %+v", i, *n, cases[i])
		}
	}
	// No choice and no provider's address: nothing kept.
	set(t, askd.PersonNotify{Person: "carol"})
	if got := read(t, "carol"); !same(got, askd.PersonNotify{Person: "carol"}) || got.Email != nil {
		t.Errorf("Notify after clearing = %+v, want none", got)
	}
}
