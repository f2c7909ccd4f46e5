package app

import (
	"context"
	"time"

	"github.com/askd-dev/askd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the Prometheus figures askd publishes at /metrics.
type Metrics struct {
	Registry     *prometheus.Registry
	asksCreated  *prometheus.CounterVec
	asksSettled  *prometheus.CounterVec
	timeToAnswer *prometheus.HistogramVec
	ruleAnswers  *prometheus.CounterVec
	// storageErrors counts reads and writes failed for a storage fault, by
	// its code (full, read_only, corrupt, busy, unavailable).
	storageErrors *prometheus.CounterVec
	SSEClients    prometheus.Gauge
}

func newMetrics(s *Service) *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		asksCreated: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askd_asks_created_total", Help: "Asks created, by kind.",
		}, []string{"kind"}),
		asksSettled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askd_asks_settled_total", Help: "Asks settled, by kind and outcome (answered, dismissed, timeout, withdrawn, replaced).",
		}, []string{"kind", "outcome"}),
		timeToAnswer: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "askd_time_to_answer_seconds", Help: "Time from an ask's creation to a person answering it.",
			Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600},
		}, []string{"kind"}),
		ruleAnswers: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askd_rule_answers_total", Help: "Approvals answered at once by a person's rule, by effect (allow, deny).",
		}, []string{"effect"}),
		storageErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "askd_storage_errors_total", Help: "Reads and writes that failed for a storage fault, by cause (full, read_only, corrupt, busy, unavailable).",
		}, []string{"cause"}),
		SSEClients: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "askd_sse_clients", Help: "Inbox event streams connected to this process.",
		}),
	}
	pending := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "askd_asks_pending", Help: "Asks waiting for a person, in the whole database.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		var n int
		err := s.store.View(ctx, func(tx askd.Tx) (err error) {
			n, err = tx.Asks.CountAsks(ctx, askd.AskFilter{Status: askd.StatusPending})
			return err
		})
		if err != nil {
			return -1
		}
		return float64(n)
	})
	waiters := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "askd_waiters", Help: "Calls blocked waiting for an answer in this process.",
	}, func() float64 { return float64(s.hub.count()) })
	m.Registry.MustRegister(m.asksCreated, m.asksSettled, m.timeToAnswer, m.ruleAnswers, m.storageErrors, m.SSEClients, pending, waiters,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *Metrics) created(a *askd.Ask) {
	m.asksCreated.WithLabelValues(string(a.Kind)).Inc()
}

func (m *Metrics) settled(a *askd.Ask) {
	outcome := string(a.CancelReason)
	if a.Status == askd.StatusAnswered {
		outcome = "answered"
		if a.SettledAt != nil {
			m.timeToAnswer.WithLabelValues(string(a.Kind)).Observe(a.SettledAt.Sub(a.CreatedAt).Seconds())
		}
	}
	m.asksSettled.WithLabelValues(string(a.Kind), outcome).Inc()
}

// answeredByRule counts ask a, answered by rule r as it was created: settled
// as answered, but not in the time to answer, which is a person's.
func (m *Metrics) answeredByRule(a *askd.Ask, r *askd.Rule) {
	m.asksSettled.WithLabelValues(string(a.Kind), "answered").Inc()
	m.ruleAnswers.WithLabelValues(string(r.Effect)).Inc()
}
