package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/askd-dev/askd"
	"github.com/askd-dev/askd/internal/openstore"
)

// seedConfig is askd-bench seed's flags.
type seedConfig struct {
	db                string
	settled, pending  int
	sessionAsks       int           // asks per session
	agents, people    int           // agent tokens' and people's names the asks spread over
	oldest, newest    time.Duration // how long ago the first and the last settled ask were settled
	perTransaction    int
	seed              uint64
	progress          time.Duration
	pendingNewestTime time.Duration
}

// seedWords are the words seeded asks are written with: a search for one
// word matches about 1 settled ask in len(seedWords)/3 (a title holds three).
var seedWords = []string{
	"deploy", "migrate", "rollback", "restart", "rotate", "upgrade", "delete", "rename", "publish", "rebuild",
	"schema", "cache", "index", "certificate", "secret", "bucket", "cluster", "queue", "release", "branch",
	"billing", "search", "payments", "gateway", "scheduler", "importer", "exporter", "ledger", "notifier", "reports",
	"staging", "production", "canary", "nightly", "preview", "sandbox", "mirror", "replica", "primary", "archive",
}

// runSeed is askd-bench seed: it writes settled asks with their history (and
// so their rows of the audit chain), and pending asks, straight into the
// database --db names, through askd's own store (the same statements, hashes
// and search index as askd serve writes), many asks per transaction. The
// figures of docs/benchmarks.md's scale rows are taken on what it wrote.
func runSeed(ctx context.Context, args []string, stdout io.Writer) error {
	sc, err := parseSeedFlags(args, stdout)
	if err != nil {
		return err
	}
	st, err := openstore.Open(ctx, sc.db)
	if err != nil {
		return err
	}
	defer st.Close()
	s := &seeder{cfg: sc, st: st, rnd: rand.New(rand.NewPCG(sc.seed, 1)), now: time.Now().UTC(), out: stdout}
	start := time.Now()
	if err := s.settledAsks(ctx); err != nil {
		return err
	}
	if err := s.pendingAsks(ctx); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "seeded %d settled asks (%d history rows) and %d pending in %s\n",
		sc.settled, s.events, sc.pending, time.Since(start).Round(time.Second))
	return nil
}

func parseSeedFlags(args []string, stdout io.Writer) (seedConfig, error) {
	var sc seedConfig
	fs := flag.NewFlagSet("askd-bench seed", flag.ContinueOnError)
	synopsis := "seed --db DB [--settled N] [--pending N]"
	fs.StringVar(&sc.db, "db", "", "the database to seed: a SQLite file (created and migrated if missing) or a postgres:// URL")
	fs.IntVar(&sc.settled, "settled", 0, "settled asks to write, each with its history: created, then answered by one of --people")
	fs.IntVar(&sc.pending, "pending", 0, "pending asks to write (created in the last --pending-within)")
	fs.IntVar(&sc.sessionAsks, "session-asks", 20, "asks per session")
	fs.IntVar(&sc.agents, "agents", 8, "agent names the sessions spread over (seed-agent-1, ...)")
	fs.IntVar(&sc.people, "people", 20, "people who answered the settled asks (person-1, ...)")
	fs.DurationVar(&sc.oldest, "oldest", 400*24*time.Hour, "how long ago the first settled ask was settled")
	fs.DurationVar(&sc.newest, "newest", 100*24*time.Hour, "how long ago the last settled ask was settled (askd serve --retain below it purges them all)")
	fs.DurationVar(&sc.pendingNewestTime, "pending-within", time.Hour, "pending asks were created within this long before now")
	fs.IntVar(&sc.perTransaction, "per-transaction", 0, "asks written per transaction (default: 1000 on SQLite, 100 on PostgreSQL, whose\n"+
		"trigger rewrites the chain's one head row for each history row: in one transaction each rewrite leaves a version the\n"+
		"next steps over, and 1,000 asks a transaction seeded at a tenth of the speed)")
	fs.Uint64Var(&sc.seed, "seed", 1, "the random seed: the same flags write the same asks")
	fs.DurationVar(&sc.progress, "progress", 30*time.Second, "print progress this often")
	if err := parse(fs, synopsis, args, stdout); err != nil {
		return sc, err
	}
	if sc.perTransaction == 0 {
		sc.perTransaction = 1000
		if openstore.IsPostgres(sc.db) {
			sc.perTransaction = 100
		}
	}
	switch {
	case sc.db == "":
		return sc, usageError("seed: --db is required")
	case sc.settled < 0 || sc.pending < 0:
		return sc, usageError("seed: --settled and --pending are counts, 0 or more")
	case sc.sessionAsks < 1 || sc.agents < 1 || sc.people < 1 || sc.perTransaction < 0:
		return sc, usageError("seed: --session-asks, --agents and --people must be 1 or more, --per-transaction 0 or more")
	case sc.newest < 0 || sc.oldest < sc.newest:
		return sc, usageError("seed: --oldest must be at least --newest, and both 0 or more")
	}
	return sc, nil
}

type seeder struct {
	cfg    seedConfig
	st     askd.Store
	rnd    *rand.Rand
	now    time.Time
	out    io.Writer
	events int
}

// title is an approval's or a question's text: three of seedWords and a
// service number, so that searches for a word find some asks, not all.
func (s *seeder) title(i int) string {
	w := func() string { return seedWords[s.rnd.IntN(len(seedWords))] }
	return fmt.Sprintf("%s the %s %s of service-%d (#%d)", w(), w(), w(), s.rnd.IntN(500), i)
}

// ask is the i-th ask of a kind of its own (approvals, questions and
// attention asks in turn), created at created in session of agent.
func (s *seeder) ask(i int, agent, session string, created time.Time) *askd.Ask {
	a := &askd.Ask{Session: session, Agent: agent, Status: askd.StatusPending, Revision: 1, CreatedAt: created, UpdatedAt: created}
	switch i % 3 {
	case 0:
		a.Kind, a.Title, a.ToolName = askd.KindApproval, s.title(i), "Bash"
		a.Payload = json.RawMessage(fmt.Sprintf(`{"command":"make %s"}`, seedWords[s.rnd.IntN(len(seedWords))]))
	case 1:
		a.Kind = askd.KindQuestion
		a.Questions = []askd.Question{{Question: s.title(i) + "?", Header: "Choice",
			Options: []askd.Option{{Label: "yes"}, {Label: "no"}}}}
	default:
		a.Kind, a.Title = askd.KindReady, s.title(i)
	}
	return a
}

// answer settles a as person at t, as an answer of its kind would.
func (s *seeder) answer(a *askd.Ask, person string, t time.Time) {
	switch a.Kind {
	case askd.KindApproval:
		a.Answer = &askd.Answer{Decision: askd.DecisionApproved}
		if s.rnd.IntN(4) == 0 {
			a.Answer = &askd.Answer{Decision: askd.DecisionRejected, Comment: "not " + seedWords[s.rnd.IntN(len(seedWords))] + " now"}
		}
	case askd.KindQuestion:
		a.Answer = &askd.Answer{Answers: map[string]askd.Choice{a.Questions[0].Question: {Values: []string{"yes"}}}}
	default:
		a.Answer = &askd.Answer{Answer: "done"}
	}
	a.Status, a.SettledBy, a.SettledAt, a.UpdatedAt = askd.StatusAnswered, person, &t, t
}

// names are the agent and session of the i-th ask: --session-asks asks in
// a row share a session, sessions spread over the agents.
func (s *seeder) names(prefix string, i int) (agent, session string) {
	n := i / s.cfg.sessionAsks
	return fmt.Sprintf("seed-agent-%d", n%s.cfg.agents+1), fmt.Sprintf("%s-%d", prefix, n)
}

// event is the history row of a's transition, with a's snapshot as it is
// now.
func event(a *askd.Ask, action, actor string, at time.Time) *askd.Event {
	snap := *a
	return &askd.Event{AskID: a.ID, Session: a.Session, Action: action, Actor: actor, At: at, Ask: &snap}
}

// settledAsks writes cfg.settled asks settled evenly from cfg.oldest ago
// to cfg.newest ago, each waiting a few seconds to a few minutes. In a
// transaction, groups of eight are created, then answered, as agents
// working side by side interleave their rows in the chain.
func (s *seeder) settledAsks(ctx context.Context) error {
	n := s.cfg.settled
	if n == 0 {
		return nil
	}
	span := s.cfg.oldest - s.cfg.newest
	first := s.now.Add(-s.cfg.oldest)
	last := time.Now()
	for done := 0; done < n; {
		count := min(s.cfg.perTransaction, n-done)
		err := s.st.Update(ctx, func(tx askd.Tx) error {
			const group = 8
			for g := 0; g < count; g += group {
				var (
					asks      []*askd.Ask
					settledAt []time.Time
				)
				for i := done + g; i < done+min(g+group, count); i++ {
					agent, session := s.names("seed-s", i)
					settled := first.Add(time.Duration(float64(span) * float64(i) / float64(n))).Truncate(time.Microsecond)
					created := settled.Add(-time.Duration(2+s.rnd.IntN(300)) * time.Second)
					if i%s.cfg.sessionAsks == 0 {
						if _, err := tx.Sessions.AddSession(ctx, agent, session, created); err != nil {
							return err
						}
					}
					a := s.ask(i, agent, session, created)
					if err := tx.Asks.CreateAsk(ctx, a); err != nil {
						return err
					}
					if err := tx.Events.AddEvent(ctx, event(a, askd.ActionCreated, agent, created)); err != nil {
						return err
					}
					asks, settledAt = append(asks, a), append(settledAt, settled)
				}
				for k, a := range asks {
					s.answer(a, fmt.Sprintf("person-%d", s.rnd.IntN(s.cfg.people)+1), settledAt[k])
					if err := tx.Asks.UpdateAsk(ctx, a); err != nil {
						return err
					}
					if err := tx.Events.AddEvent(ctx, event(a, askd.ActionAnswered, a.SettledBy, *a.SettledAt)); err != nil {
						return err
					}
				}
				s.events += 2 * len(asks)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed settled asks %d-%d: %w", done+1, done+count, err)
		}
		done += count
		if time.Since(last) >= s.cfg.progress {
			last = time.Now()
			fmt.Fprintf(s.out, "%d of %d settled asks\n", done, n)
		}
	}
	return nil
}

// pendingAsks writes cfg.pending pending asks, created within
// cfg.pendingNewestTime before now, oldest first.
func (s *seeder) pendingAsks(ctx context.Context) error {
	n := s.cfg.pending
	run := s.now.UnixNano()
	for done := 0; done < n; {
		count := min(s.cfg.perTransaction, n-done)
		err := s.st.Update(ctx, func(tx askd.Tx) error {
			for i := done; i < done+count; i++ {
				agent, session := s.names(fmt.Sprintf("seed-p%d", run), i)
				created := s.now.Add(-s.cfg.pendingNewestTime + time.Duration(float64(s.cfg.pendingNewestTime)*float64(i)/float64(n))).Truncate(time.Microsecond)
				if i%s.cfg.sessionAsks == 0 {
					if _, err := tx.Sessions.AddSession(ctx, agent, session, created); err != nil {
						return err
					}
				}
				a := s.ask(i, agent, session, created)
				if err := tx.Asks.CreateAsk(ctx, a); err != nil {
					return err
				}
				if err := tx.Events.AddEvent(ctx, event(a, askd.ActionCreated, agent, created)); err != nil {
					return err
				}
				s.events++
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("seed pending asks %d-%d: %w", done+1, done+count, err)
		}
		done += count
	}
	return nil
}
