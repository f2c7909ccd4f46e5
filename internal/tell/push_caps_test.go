package tell_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/pgtest"
	"github.com/askd-dev/askd/internal/testserver"
)

// eachPushStore runs f on a server with Web Push on over SQLite, and on
// one over PostgreSQL (a throwaway cluster, see internal/pgtest).
func eachPushStore(t *testing.T, f func(t *testing.T, srv *testserver.Server)) {
	t.Run("sqlite", func(t *testing.T) { f(t, startPush(t)) })
	t.Run("postgres", func(t *testing.T) {
		f(t, startPushOn(t, testserver.OpenPostgres(t, pgtest.URL(t))))
	})
}

// storedEndpoints returns the endpoints of every stored subscription.
func storedEndpoints(t *testing.T, srv *testserver.Server) []string {
	t.Helper()
	var out []string
	for _, p := range subscriptions(t, srv) {
		out = append(out, p.Endpoint)
	}
	return out
}

// pushesOf creates a decision ask, waits until its push delivery has
// finished, and returns how many push requests push received for it.
func pushesOf(t *testing.T, srv *testserver.Server, push *receiver) int {
	t.Helper()
	before := len(push.got())
	a := askDecision(t, srv.Agent("caps"), "Which day?")
	var d *askd.Delivery
	testserver.Eventually(t, "the push delivery to finish", func() bool {
		err := srv.Store.View(t.Context(), func(tx askd.Tx) (err error) {
			d, err = tx.Deliveries.Delivery(t.Context(), askd.PersonNotifyKey(a, "alice", askd.NotifyPush))
			return err
		})
		return err == nil && d.Status != askd.DeliveryPending
	})
	if d.Status != askd.DeliverySent {
		t.Fatalf("push delivery %s (%s), want sent", d.Status, d.LastError)
	}
	return len(push.got()) - before
}

// One browser session registering push subscriptions without end (each ask
// is then pushed to every one) is refused past MaxPushPerBrowserSession,
// and a person with many browser sessions past MaxPushPerHuman: 429 naming
// the limit, nothing stored. Re-registering an endpoint at the cap is an
// update, and still works.
func TestPushSubscriptionCaps(t *testing.T) {
	eachPushStore(t, func(t *testing.T, srv *testserver.Server) {
		push := newReceiver(t, func(int) int { return http.StatusCreated })
		keys := newBrowserKeys(t)
		subscribe := func(ck *http.Cookie, endpoint string) (int, string) {
			return browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", keys.subscription(endpoint))
		}

		// One browser session: cap + 1 distinct endpoints.
		first := srv.BrowserCookie(t, "alice")
		for i := range askd.MaxPushPerBrowserSession {
			if status, body := subscribe(first, fmt.Sprintf("%s/b0/%d", push.URL, i)); status != http.StatusCreated {
				t.Fatalf("subscription %d = %d %s", i, status, body)
			}
		}
		refused := push.URL + "/b0/one-more"
		status, body := subscribe(first, refused)
		if status != http.StatusTooManyRequests || !strings.Contains(body, fmt.Sprintf("at most %d", askd.MaxPushPerBrowserSession)) ||
			!strings.Contains(body, `"code":"limit"`) {
			t.Fatalf("subscription %d of one browser session = %d %s; want 429 naming the limit", askd.MaxPushPerBrowserSession+1, status, body)
		}
		stored := storedEndpoints(t, srv)
		if len(stored) != askd.MaxPushPerBrowserSession || slices.Contains(stored, refused) {
			t.Fatalf("stored after the refusal: %d subscriptions %v; want %d, not the refused one", len(stored), stored, askd.MaxPushPerBrowserSession)
		}
		// At the cap, subscribing an endpoint again replaces it.
		if status, body := subscribe(first, push.URL+"/b0/0"); status != http.StatusCreated {
			t.Fatalf("re-subscribing an endpoint at the cap = %d %s, want 201", status, body)
		}

		// More browser sessions of the same person, up to the person's cap.
		for b := 1; b < askd.MaxPushPerHuman/askd.MaxPushPerBrowserSession; b++ {
			ck := srv.BrowserCookie(t, "alice")
			for i := range askd.MaxPushPerBrowserSession {
				if status, body := subscribe(ck, fmt.Sprintf("%s/b%d/%d", push.URL, b, i)); status != http.StatusCreated {
					t.Fatalf("browser session %d, subscription %d = %d %s", b, i, status, body)
				}
			}
		}
		fresh := srv.BrowserCookie(t, "alice")
		refused = push.URL + "/fresh/0"
		status, body = subscribe(fresh, refused)
		if status != http.StatusTooManyRequests || !strings.Contains(body, fmt.Sprintf("at most %d", askd.MaxPushPerHuman)) ||
			!strings.Contains(body, "alice") {
			t.Fatalf("subscription %d of one person = %d %s; want 429 naming the limit", askd.MaxPushPerHuman+1, status, body)
		}
		// Moving an endpoint from one browser session to another of the same
		// person (signed in anew in that browser) adds none for the person.
		if status, body := subscribe(fresh, push.URL+"/b0/1"); status != http.StatusCreated {
			t.Fatalf("moving an endpoint to another browser session of the person = %d %s, want 201", status, body)
		}
		stored = storedEndpoints(t, srv)
		if len(stored) != askd.MaxPushPerHuman || slices.Contains(stored, refused) {
			t.Fatalf("stored: %d subscriptions; want %d, not the refused one", len(stored), askd.MaxPushPerHuman)
		}

		// The next ask is pushed once per stored subscription, no more.
		if n := pushesOf(t, srv, push); n != askd.MaxPushPerHuman {
			t.Errorf("one ask pushed %d times, want %d (one per subscription)", n, askd.MaxPushPerHuman)
		}
	})
}

// Concurrent subscriptions of one browser session cannot pass the cap
// between them: the count and the insert are one transaction.
func TestPushSubscriptionCapHoldsConcurrently(t *testing.T) {
	eachPushStore(t, func(t *testing.T, srv *testserver.Server) {
		push := newReceiver(t, func(int) int { return http.StatusCreated })
		keys := newBrowserKeys(t)
		ck := srv.BrowserCookie(t, "alice")
		const tries = 3 * askd.MaxPushPerBrowserSession
		statuses := make([]int, tries)
		var wg sync.WaitGroup
		for i := range tries {
			wg.Go(func() {
				statuses[i], _ = browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", keys.subscription(fmt.Sprintf("%s/c/%d", push.URL, i)))
			})
		}
		wg.Wait()
		created := 0
		for i, st := range statuses {
			switch st {
			case http.StatusCreated:
				created++
			case http.StatusTooManyRequests:
			default:
				t.Errorf("subscription %d = %d, want 201 or 429", i, st)
			}
		}
		if n := len(storedEndpoints(t, srv)); created != askd.MaxPushPerBrowserSession || n != created {
			t.Errorf("%d of %d concurrent subscriptions created, %d stored; want %d", created, tries, n, askd.MaxPushPerBrowserSession)
		}
		if n := pushesOf(t, srv, push); n != askd.MaxPushPerBrowserSession {
			t.Errorf("one ask pushed %d times, want %d", n, askd.MaxPushPerBrowserSession)
		}
	})
}

// A person's cap counts no subscription of a browser session that has
// expired: expired browser sessions go first, with their subscriptions.
func TestPushCapCountsLiveBrowserSessionsOnly(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	cfg := app.Config{Notifiers: []askd.Channel{{Type: askd.NotifyPush}}, WebhookAllow: loopback,
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }}
	srv := testserver.Start(t, testserver.Options{Config: cfg})
	keys := newBrowserKeys(t)
	push := newReceiver(t, nil)
	for b := range askd.MaxPushPerHuman / askd.MaxPushPerBrowserSession {
		ck := srv.BrowserCookie(t, "alice")
		for i := range askd.MaxPushPerBrowserSession {
			if status, body := browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", keys.subscription(fmt.Sprintf("%s/old%d/%d", push.URL, b, i))); status != http.StatusCreated {
				t.Fatalf("subscribe = %d %s", status, body)
			}
		}
	}
	// A browser session signed in before those expire, used after.
	advance(app.BrowserSessionIdle - time.Hour)
	ck := srv.BrowserCookie(t, "alice")
	advance(2 * time.Hour)
	if status, body := browserDo(t, srv, ck, http.MethodPost, "/api/push/subscriptions", keys.subscription(push.URL+"/new")); status != http.StatusCreated {
		t.Fatalf("subscribe after the others expired = %d %s, want 201", status, body)
	}
	if got := storedEndpoints(t, srv); len(got) != 1 || got[0] != push.URL+"/new" {
		t.Errorf("stored %d subscriptions, want only the new one", len(got))
	}
}
