package sqlite

import (
	"testing"

	"github.com/askd-dev/askd/internal/storetest"
)

// TestMigrateTeams: a database from before a team's inbox (migrations
// 001–012 applied), holding what storetest.CheckTeamsMigrated describes,
// has its human token made an admin once opened.
func TestMigrateTeams(t *testing.T) {
	path := oldDatabase(t, "013",
		`INSERT INTO tokens (name, role, hash, created_at) VALUES ('alice', 'human', 'aa', 10), ('ci', 'agent', 'cc', 20)`,
		`INSERT INTO asks (kind, session, agent, status, title, created_at, updated_at) VALUES ('ready', 's', 'ci', 'pending', 'Review', 30, 30)`)

	storetest.CheckTeamsMigrated(t, openAt(t, path))
}
