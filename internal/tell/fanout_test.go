package tell_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/client"
	"github.com/askd-dev/askd/internal/app"
	"github.com/askd-dev/askd/internal/testserver"
)

// BenchmarkTeamFanout: a new ask routed to a team of 50, each with an ntfy
// topic of their own (SPEC §10): the time from the ask's creation until all
// 50 topics have it. A benchmark, not a test: it asserts no time.
func BenchmarkTeamFanout(b *testing.B) {
	for _, n := range []int{1, 50} {
		b.Run(fmt.Sprintf("team of %d", n), func(b *testing.B) {
			// Each notification a topic receives is a value on got: the
			// benchmark waits for n of them, an event, not a clock.
			got := make(chan struct{}, 1024)
			ntfy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				got <- struct{}{}
			}))
			b.Cleanup(ntfy.Close)
			srv := testserver.Start(b, testserver.Options{Config: app.Config{WebhookAllow: loopback, MaxPending: 100000, MaxPendingPerToken: 100000, MaxNewSessions: 100000}})
			runWorker(b, srv.App, nil)
			ctx := b.Context()
			var people []string
			for i := range n {
				name := fmt.Sprintf("p%02d", i)
				people = append(people, name)
				tok := srv.TokenWith(b, app.TokenSpec{Name: name, Role: askd.RoleHuman})
				if _, err := client.New(srv.URL, tok).SetMyNotify(ctx, askd.PersonNotify{Ntfy: ntfy.URL + "/" + name}); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := srv.App.CreateTeam(ctx, app.Itself, app.TeamInput{Name: "big", Members: people}); err != nil {
				b.Fatal(err)
			}
			agent := client.New(srv.URL, srv.TokenWith(b, app.TokenSpec{Name: "fan", Role: askd.RoleAgent, Owner: "team:big"}))
			i := 0
			b.ResetTimer()
			for b.Loop() {
				agent.Session = fmt.Sprintf("s%d", i)
				i++
				if _, err := agent.Create(ctx, &askd.AskInput{Kind: askd.KindReady, Title: "look"}, 0); err != nil {
					b.Fatal(err)
				}
				timeout := time.After(time.Minute)
				for k := range n {
					select {
					case <-got:
					case <-timeout:
						b.Fatalf("%d of %d notified", k, n)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/float64(n), "µs/person")
		})
	}
}
