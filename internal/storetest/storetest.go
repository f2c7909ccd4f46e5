// Package storetest is the conformance suite of askd.Store: one set of tests
// that every store (SQLite, PostgreSQL) runs, so that they behave alike.
//
// Beyond what the askd.Store and askd.Tx comments say, the suite pins down:
//   - times come back in UTC, equal to what was stored truncated to the
//     microsecond (PostgreSQL's precision);
//   - JSON payloads come back equal as JSON values, not byte for byte;
//   - FindAsks honours every AskFilter field; CountAsks counts every match,
//     ignoring Limit; SettledBefore and DeadlineBefore are strict (<);
//   - AddEvent without Ask snapshots the ask as stored in the transaction;
//   - Tokens lists by name; Sessions lists by agent, then name, by bytes;
//   - SetAccess changes human tokens only and SetOwner agent tokens only;
//   - Teams lists by name and TeamsOf, NotifyAll and a team's members are
//     sorted, all by bytes; a team's members must be people (human tokens),
//     and memberships and notification settings go with the team and with
//     the person's token;
//   - AskFilter.Routes and PendingQuery.Routes match an ask by its owner,
//     or by whom it was escalated to (never by an empty escalated_to);
//     EscalateDue is inclusive (<=) of both the due time and the end of a
//     snooze;
//   - pages (PendingAsks, Sessions, SearchAsks after a key) neither skip nor
//     repeat items when others arrive or go between pages;
//   - SearchAsks finds settled asks only, by the words of their text and
//     answer (not previews, not payloads), the last word as a prefix too;
//   - ids of asks and events are never reused, even after DeleteAsks;
//   - an agent token's approvals that hold a key (askd.Ask.HoldsKey: keyed,
//     but not one-call and told) are one per key: CreateAsk refuses a
//     second with ECONFLICT, and a one-call approval told frees its key;
//     FindAsks by key finds every approval asked with it, told or not;
//   - every history row is a row of one hash chain (AuditRows passes
//     askd.VerifyAudit); config rows (AddConfigEvent) are in it but are no
//     ask's events, and no watcher hears of them; DeleteAsks takes no row
//     out of the chain: the purged asks' rows stay in it, purged (their
//     body instead of their session, actor and note), with one purge
//     record per run of them; DeleteAsks removes at most its limit, the
//     asks settled first first, and the chain verifies after each call;
//     LastConfigEvent finds the newest config row
//     of an action;
//   - watchers hear of committed events in order, and of nothing rolled back;
//   - deliveries are claimed due-first, never twice while leased, even by
//     concurrent claimers, and go with their ask; a session's tells that
//     wait for the agent are claimed (by channel bridges) oldest first,
//     only while settled and untold, only the session's own (agent token
//     and name), never twice while leased, and never by workers;
//   - a session's bridge lease keeps the latest, and is ended only by the
//     bridge whose lease it is;
//   - a sign-in code is taken once, even by concurrent takers; sign-in codes
//     and browser sessions go with their human token;
//   - an identity is linked to a person (a human token) only, one person
//     per issuer and subject, and outlives the person's token (revoking it
//     is the app's act, RevokeIdentitiesOf); a provider sign-in is taken
//     once, even by concurrent takers, and a trim keeps the newest;
//   - FindRules lists oldest first; a rule is live at t only when not revoked
//     and expiring after t (strict); rules go with their agent's token and
//     their maker's, and their ids are never reused;
//   - an answer link is used once, even by concurrent users; links go when
//     they expire (strictly before the time given), with their ask and
//     with their human token;
//   - push subscriptions are listed by endpoint, only while their browser
//     session is live (expiring strictly after the time given), and go with
//     their browser session and human token; VAPID keys are stored once,
//     even by concurrent makers.
//
// The suite never goes on using a transaction after one of its statements
// failed (PostgreSQL aborts the transaction then): each expected failure has
// a transaction of its own.
package storetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/askd-dev/askd"
)

// Run runs the suite. open must return a new, empty, migrated store each time
// it is called (the suite calls it once per subtest) and close it with
// t.Cleanup. reopen must return another store on the database of s, a store
// open returned, as another process would open it (connections and a writer
// of its own), also closed with t.Cleanup: writers must take turns across
// the two (askd.Store.Update).
func Run(t *testing.T, open func(t *testing.T) askd.Store, reopen func(t *testing.T, s askd.Store) askd.Store) {
	tests := []struct {
		name string
		run  func(t *testing.T, s askd.Store)
	}{
		{"AskRoundTrip", testAskRoundTrip},
		{"UpdateAsk", testUpdateAsk},
		{"ReadAsk", testReadAsk},
		{"NotFound", testNotFound},
		{"FindAsks", testFindAsks},
		{"CountAsks", testCountAsks},
		{"DeleteAsks", testDeleteAsks},
		{"IDsNeverReused", testIDsNeverReused},
		{"KeysHeld", testKeysHeld},
		{"AuditChain", testAuditChain},
		{"AuditPurge", testAuditPurge},
		{"AuditPurgeInBatches", testAuditPurgeInBatches},
		{"LastConfigEvent", testLastConfigEvent},
		{"Sessions", testSessions},
		{"SessionsPaged", testSessionsPaged},
		{"UrgencyOrder", testUrgencyOrder},
		{"PagingPending", testPagingPending},
		{"Search", testSearch},
		{"SearchInStep", testSearchInStep},
		{"AskHistory", testAskHistory},
		{"EventsAfter", testEventsAfter},
		{"EventSnapshotFromStore", testEventSnapshotFromStore},
		{"LastEventID", testLastEventID},
		{"Tokens", testTokens},
		{"TokenNameTaken", testTokenNameTaken},
		{"AccessAndOwner", testAccessAndOwner},
		{"Policies", testPolicies},
		{"Teams", testTeams},
		{"NotifySettings", testNotifySettings},
		{"NotifyEmail", testNotifyEmail},
		{"Routes", testRoutes},
		{"PendingRoutes", testPendingRoutes},
		{"SessionRoutes", testSessionRoutes},
		{"EscalateDue", testEscalateDue},
		{"RolledBackUpdate", testRolledBackUpdate},
		{"PanicInUpdate", testPanicInUpdate},
		{"WatchAfterCommit", testWatchAfterCommit},
		{"ViewSeesOnlyCommitted", testViewSeesOnlyCommitted},
		{"ViewRefusesWrites", testViewRefusesWrites},
		{"ConcurrentUpdates", testConcurrentUpdates},
		{"ConcurrentUpdatesSomeFail", testConcurrentUpdatesSomeFail},
		{"WritersTakeTurns", func(t *testing.T, s askd.Store) { testWritersTakeTurns(t, s, reopen) }},
		{"Channels", testChannels},
		{"SessionsRecorded", testSessionsRecorded},
		{"SessionState", testSessionState},
		{"DeliveryRoundTrip", testDeliveryRoundTrip},
		{"AddDelivery", testAddDelivery},
		{"ClaimDeliveries", testClaimDeliveries},
		{"ConcurrentClaims", testConcurrentClaims},
		{"ClaimSessionTells", testClaimSessionTells},
		{"ConcurrentSessionClaims", testConcurrentSessionClaims},
		{"BridgeLeases", testBridgeLeases},
		{"MCPCalls", testMCPCalls},
		{"SignInCodes", testSignInCodes},
		{"ConcurrentSignInCode", testConcurrentSignInCode},
		{"BrowserSessions", testBrowserSessions},
		{"RevokeEndsSignIns", testRevokeEndsSignIns},
		{"DeleteExpiredSignIns", testDeleteExpiredSignIns},
		{"Identities", testIdentities},
		{"IdentitiesOutliveTokens", testIdentitiesOutliveTokens},
		{"ProviderSignIns", testProviderSignIns},
		{"ConcurrentProviderSignIn", testConcurrentProviderSignIn},
		{"SetTokenHash", testSetTokenHash},
		{"RuleRoundTrip", testRuleRoundTrip},
		{"FindRules", testFindRules},
		{"UpdateRule", testUpdateRule},
		{"RulesGoWithTokens", testRulesGoWithTokens},
		{"AnswerLinks", testAnswerLinks},
		{"ConcurrentAnswerLinkUse", testConcurrentAnswerLinkUse},
		{"AnswerLinksGo", testAnswerLinksGo},
		{"PushSubscriptions", testPushSubscriptions},
		{"PushSubscriptionsGo", testPushSubscriptionsGo},
		{"CountPushSubscriptions", testCountPushSubscriptions},
		{"VAPIDKeys", testVAPIDKeys},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.run(t, open(t))
		})
	}
}

// base is the suite's clock: not UTC, and with nanoseconds, so that stores
// must convert and truncate.
var base = time.Date(2026, time.March, 14, 15, 9, 26, 535897932, time.FixedZone("UTC+1", 3600))

// at is base plus d.
func at(d time.Duration) time.Time { return base.Add(d) }

// purgeBefore is a purge of the asks settled before settledBefore, under a
// retention of a day.
func purgeBefore(settledBefore time.Time) askd.Purge {
	return askd.Purge{SettledBefore: settledBefore, At: settledBefore.Add(24 * time.Hour), Retain: 24 * time.Hour}
}

// ptr returns a pointer to t.
func ptr(t time.Time) *time.Time { return &t }

// stored is t as a store must give it back: UTC, to the microsecond.
func stored(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// update runs fn in a write transaction and fails the test on error.
func update(t *testing.T, s askd.Store, fn func(tx askd.Tx) error) {
	t.Helper()
	if err := s.Update(t.Context(), fn); err != nil {
		t.Fatalf("update: %v", err)
	}
}

// view runs fn in a read transaction and fails the test on error.
func view(t *testing.T, s askd.Store, fn func(tx askd.Tx) error) {
	t.Helper()
	if err := s.View(t.Context(), fn); err != nil {
		t.Fatalf("view: %v", err)
	}
}

// create stores the asks, in order, in one transaction, setting their ids.
func create(t *testing.T, s askd.Store, asks ...*askd.Ask) {
	t.Helper()
	update(t, s, func(tx askd.Tx) error {
		for _, a := range asks {
			if err := tx.Asks.CreateAsk(t.Context(), a); err != nil {
				return err
			}
		}
		return nil
	})
}

// newAsk returns a pending ask of the kind, with the content its kind needs.
// byAgent sets a's agent token: the same session name under another token is
// another session.
func byAgent(a *askd.Ask, agent string) *askd.Ask {
	a.Agent = agent
	return a
}

func newAsk(kind askd.Kind, session string, created time.Time) *askd.Ask {
	a := &askd.Ask{
		Kind:      kind,
		Session:   session,
		Agent:     "agent-1",
		Status:    askd.StatusPending,
		Revision:  1,
		CreatedAt: created,
		UpdatedAt: created,
	}
	if kind == askd.KindQuestion {
		a.Questions = []askd.Question{{
			Question: "Proceed?",
			Header:   "Proceed",
			Options:  []askd.Option{{Label: "yes"}, {Label: "no"}},
		}}
	} else {
		a.Title = "Proceed?"
	}
	return a
}

// settled returns a settled at settledAt: answered, or cancelled with reason.
func settled(a *askd.Ask, reason askd.CancelReason, settledAt time.Time) *askd.Ask {
	if reason == "" {
		a.Settle(askd.StatusAnswered, "", &askd.Answer{Response: "done"}, "reviewer", settledAt)
	} else {
		a.Settle(askd.StatusCancelled, reason, nil, "reviewer", settledAt)
	}
	return a
}

// wantCode fails the test unless err is an *askd.Error with the code and a message.
func wantCode(t *testing.T, err error, code string) {
	t.Helper()
	var e *askd.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T): want an *askd.Error with code %s", err, err, code)
	}
	if got := askd.ErrorCode(err); got != code {
		t.Fatalf("error %q: code %s, want %s", err, got, code)
	}
	if e.Message == "" {
		t.Fatalf("error with code %s has no message", code)
	}
}

// checkTime fails the test unless got is want as stored, in UTC.
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !got.Equal(stored(want)) {
		t.Errorf("%s = %s, want %s", what, got.Format(time.RFC3339Nano), stored(want).Format(time.RFC3339Nano))
	}
	if got.Location() != time.UTC {
		t.Errorf("%s in %s, want UTC", what, got.Location())
	}
}

// checkTimePtr is checkTime for optional times.
func checkTimePtr(t *testing.T, what string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil:
		t.Errorf("%s = %v, want %v", what, got, want)
	default:
		checkTime(t, what, *got, *want)
	}
}

// checkJSON fails the test unless got and want hold the same JSON value.
func checkJSON(t *testing.T, what string, got, want json.RawMessage) {
	t.Helper()
	if len(got) == 0 || len(want) == 0 {
		if len(got) != len(want) {
			t.Errorf("%s = %s, want %s", what, got, want)
		}
		return
	}
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Errorf("%s = %s: %v", what, got, err)
		return
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want %s: %v", what, want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

// checkAsk fails the test unless got is want as a store gives it back.
func checkAsk(t *testing.T, what string, got, want *askd.Ask) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: nil ask", what)
	}
	checkTime(t, what+": created_at", got.CreatedAt, want.CreatedAt)
	checkTime(t, what+": updated_at", got.UpdatedAt, want.UpdatedAt)
	checkTimePtr(t, what+": deadline", got.Deadline, want.Deadline)
	checkTimePtr(t, what+": snoozed_until", got.SnoozedUntil, want.SnoozedUntil)
	checkTimePtr(t, what+": settled_at", got.SettledAt, want.SettledAt)
	checkTimePtr(t, what+": told_at", got.ToldAt, want.ToldAt)
	checkTimePtr(t, what+": claimed_at", got.ClaimedAt, want.ClaimedAt)
	checkTimePtr(t, what+": escalated_at", got.EscalatedAt, want.EscalatedAt)
	checkJSON(t, what+": payload", got.Payload, want.Payload)

	// The rest compares as plain values once the times and JSON are out of the way.
	g, w := *got, *want
	for _, a := range []*askd.Ask{&g, &w} {
		a.CreatedAt, a.UpdatedAt = time.Time{}, time.Time{}
		a.Deadline, a.SnoozedUntil, a.SettledAt, a.ToldAt = nil, nil, nil, nil
		a.ClaimedAt, a.EscalatedAt = nil, nil
		a.Payload = nil
	}
	// An attention ask's slot, set as a store reads it; a keyed approval's
	// key, as stored.
	wantKey := askd.SlotKey(got.Kind, got.Session)
	if want.Kind == askd.KindApproval {
		wantKey = want.Key
	}
	if got.Key != wantKey {
		t.Errorf("%s: key %q, want %q: a store keeps an approval's, and sets an attention ask's slot as it reads (askd.Ask.WithKey)", what, got.Key, wantKey)
	}
	g.Key, w.Key = "", ""
	if (g.Answer == nil) != (w.Answer == nil) {
		t.Errorf("%s: answer = %+v, want %+v", what, g.Answer, w.Answer)
		return
	}
	if g.Answer != nil {
		checkJSON(t, what+": answer.payload", g.Answer.Payload, w.Answer.Payload)
		ga, wa := *g.Answer, *w.Answer
		ga.Payload, wa.Payload = nil, nil
		g.Answer, w.Answer = &ga, &wa
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, dump(&g), dump(&w))
	}
}

// dump is a as indented JSON, for failure messages.
func dump(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err.Error()
	}
	return b.String()
}

// ids returns the ids of the asks, in order.
func ids(asks []*askd.Ask) []int64 {
	out := make([]int64, len(asks))
	for i, a := range asks {
		out[i] = a.ID
	}
	return out
}
