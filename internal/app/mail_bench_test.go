package app_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/app"
)

// BenchmarkCreateAnswerMailing is BenchmarkCreateAnswerParallel's one agent
// with email on (SPEC §16) and one other person with an address: each ask
// writes bob's mail, and each answer by alice the mail telling bob she
// settled it. Against agents=1 it is what mailing adds to the hot path.
func BenchmarkCreateAnswerMailing(b *testing.B) {
	svc := newService(b, app.Config{MaxPending: 1 << 20, Mail: true})
	ctx := context.Background()
	if _, _, err := svc.CreateToken(ctx, app.Itself, app.TokenSpec{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover}); err != nil {
		b.Fatal(err)
	}
	addr := "bob@example.com"
	bob := askd.Caller{Name: "bob", Role: askd.RoleHuman, Access: askd.AccessApprover}
	if _, err := svc.SetMyNotify(ctx, bob, askd.PersonNotify{Email: &addr}); err != nil {
		b.Fatal(err)
	}
	c := askd.Caller{Name: "agent", Role: askd.RoleAgent, Session: "s0"}
	b.ResetTimer()
	for i := range b.N {
		q := fmt.Sprintf("p %d?", i)
		a, err := svc.Create(ctx, c, decision(q), app.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := svc.Answer(ctx, humanCaller, a.ID, answerA(q)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}
