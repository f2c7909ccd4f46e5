// Package mailtest runs, for tests, a real SMTP server on loopback —
// Debian's aiosmtpd (python3-aiosmtpd), with smtpd.py — which reads each
// message with Python's email package as a mail client reads it (headers
// decoded, MIME parts undone, the HTML part's links, text and tags) and
// hands it to the test as a Message. Without python3-aiosmtpd a test is
// skipped loudly, and fails under CI=true. Certificates for STARTTLS and
// smtps are made by the test (SelfSigned).
package mailtest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	_ "embed"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

//go:embed smtpd.py
var script []byte

// Options choose what the server offers and how it behaves.
type Options struct {
	// Port to listen on (127.0.0.1); 0: any free one. A test that needs the
	// server down first picks one with FreePort and starts it later.
	Port int
	// StartTLS offers STARTTLS with Cert; SMTPS speaks TLS from the first
	// byte with it.
	StartTLS, SMTPS bool
	Cert            *Cert
	// User and Password are required by AUTH (over TLS only, unless
	// AuthInClear offers it without: to see that a client never uses it).
	User, Password string
	AuthInClear    bool
	// Refuse are recipients refused with 550.
	Refuse []string
	// DelayData holds the reply to each message's DATA this long.
	DelayData time.Duration
	// HoldData holds the reply to each message's DATA until Release: a
	// slow server, for as long as the test needs one.
	HoldData bool
}

// Event is one thing the server saw: "mail" (MAIL FROM), "auth" (an AUTH
// command, with whether over TLS), "refused" (a recipient refused), "held"
// (a message's DATA held, HoldData), or "message" (a message taken, with
// Message).
type Event struct {
	Event   string `json:"event"`
	TLS     bool   `json:"tls"`
	From    string `json:"from"`
	To      string `json:"to"`
	Arg     string `json:"arg"`
	Message *Message
}

// Message is one message as a mail client reads it.
type Message struct {
	MailFrom string   `json:"mail_from"`
	RcptTos  []string `json:"rcpt_tos"`
	TLS      bool     `json:"tls"`
	Auth     string   `json:"auth"` // the user it authenticated as, "" for none
	// Headers are decoded (RFC 2047 undone), by lower-case name; RawHeaders
	// as sent, unfolded.
	Headers     map[string][]string `json:"headers"`
	RawHeaders  map[string][]string `json:"raw_headers"`
	ContentType string              `json:"content_type"`
	Parts       []Part              `json:"parts"`
	Defects     []string            `json:"defects"`
}

// Part is one leaf MIME part, its transfer encoding undone.
type Part struct {
	Type     string   `json:"type"`
	Charset  string   `json:"charset"`
	Encoding string   `json:"encoding"`
	Text     string   `json:"text"`
	Defects  []string `json:"defects"`
	// HTML parts: the hrefs of its links, other URLs in attributes, its
	// text as a client shows it, and the tags it has.
	Hrefs    []string `json:"hrefs"`
	URLs     []string `json:"urls"`
	HTMLText string   `json:"html_text"`
	Tags     []string `json:"tags"`
}

// Header is the decoded value of the header name (lower case), "" when
// it has none; a header given twice fails the test.
func (m *Message) Header(t testing.TB, name string) string {
	t.Helper()
	vs := m.Headers[name]
	if len(vs) > 1 {
		t.Errorf("header %s given %d times: %q", name, len(vs), vs)
	}
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// Part returns the part of type typ (text/plain, text/html); a message
// without one fails the test.
func (m *Message) Part(t testing.TB, typ string) Part {
	t.Helper()
	for _, p := range m.Parts {
		if p.Type == typ {
			return p
		}
	}
	t.Fatalf("the message has no %s part (parts: %d, %s)", typ, len(m.Parts), m.ContentType)
	return Part{}
}

// Server is a running test mail server.
type Server struct {
	Host string // 127.0.0.1
	Port int
	opts Options

	mu      sync.Mutex
	events  []Event
	seen    chan struct{}  // a new event; capacity 1
	release io.WriteCloser // the server's stdin (command)
	stdin   sync.Mutex
	syncs   atomic.Int64 // sync events taken
}

// Release lets one held DATA be answered (HoldData).
func (s *Server) Release(t testing.TB) {
	t.Helper()
	s.command(t, "release")
}

// Sync returns once every event the server printed before it was called
// has been taken: after a delivery is recorded sent (the server printed
// the message before its reply), Messages then holds it.
func (s *Server) Sync(t testing.TB) {
	t.Helper()
	n := s.syncs.Load()
	s.command(t, "sync")
	s.Wait(t, "the server's sync", func([]Event) bool { return s.syncs.Load() > n })
}

func (s *Server) command(t testing.TB, line string) {
	t.Helper()
	s.stdin.Lock()
	defer s.stdin.Unlock()
	if _, err := io.WriteString(s.release, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// Roots are the certificates a client trusts to reach the server over TLS
// (Options.Cert's); nil for a server without TLS.
func (s *Server) Roots() *x509.CertPool {
	if s.opts.Cert == nil {
		return nil
	}
	return s.opts.Cert.Pool
}

// URL is --notify-smtp's value for the server: smtps:// or smtp://.
func (s *Server) URL() string {
	scheme := "smtp"
	if s.opts.SMTPS {
		scheme = "smtps"
	}
	return scheme + "://" + net.JoinHostPort(s.Host, strconv.Itoa(s.Port))
}

// Python returns a python3 that has aiosmtpd: Debian's first (another on
// PATH, a pyenv's say, may lack the package). None: the test is skipped,
// loudly, except under CI=true where it fails.
func Python(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import aiosmtpd").Run() == nil {
			return path
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("python3 with aiosmtpd not found; CI must install it (apt-get install python3-aiosmtpd)")
	}
	fmt.Fprintln(os.Stderr, "SKIP: python3-aiosmtpd not found; the email tests did not run (apt-get install python3-aiosmtpd)")
	t.Skip("python3-aiosmtpd not found: email tests skipped (CI=true makes this a failure)")
	return ""
}

// Start starts a server with opts and stops it in t.Cleanup.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	py := Python(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "smtpd.py")
	if err := os.WriteFile(path, script, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{path, "--port", strconv.Itoa(opts.Port)}
	if (opts.StartTLS || opts.SMTPS) && opts.Cert == nil {
		opts.Cert = SelfSigned(t)
	}
	switch {
	case opts.SMTPS:
		args = append(args, "--smtps", opts.Cert.CertFile, opts.Cert.KeyFile)
	case opts.StartTLS:
		args = append(args, "--starttls", opts.Cert.CertFile, opts.Cert.KeyFile)
	}
	if opts.User != "" {
		args = append(args, "--auth", opts.User+":"+opts.Password)
		if opts.AuthInClear {
			args = append(args, "--auth-in-clear")
		}
	}
	for _, r := range opts.Refuse {
		args = append(args, "--refuse", r)
	}
	if opts.HoldData {
		args = append(args, "--hold-data")
	}
	if opts.DelayData > 0 {
		args = append(args, "--delay-data", strconv.FormatFloat(opts.DelayData.Seconds(), 'f', 3, 64))
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	s := &Server{Host: "127.0.0.1", opts: opts, seen: make(chan struct{}, 1), release: in}
	ready := make(chan int, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
		for sc.Scan() {
			s.take(sc.Bytes(), ready)
		}
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = cmd.Wait()
	})
	select {
	case s.Port = <-ready:
	case <-done:
		t.Fatal("the test mail server exited before it was ready")
	case <-time.After(30 * time.Second):
		t.Fatal("the test mail server did not start within 30 s")
	}
	return s
}

// take reads one line the server printed.
func (s *Server) take(line []byte, ready chan<- int) {
	var e struct {
		Event
		Port int `json:"port"`
	}
	if err := json.Unmarshal(line, &e); err != nil {
		return
	}
	switch e.Event.Event {
	case "ready":
		ready <- e.Port
		return
	case "sync":
		s.syncs.Add(1)
		select {
		case s.seen <- struct{}{}:
		default:
		}
		return
	}
	ev := e.Event
	if ev.Event == "message" {
		var m Message
		if err := json.Unmarshal(line, &m); err != nil {
			return
		}
		ev.Message = &m
	}
	s.mu.Lock()
	s.events = append(s.events, ev)
	s.mu.Unlock()
	select {
	case s.seen <- struct{}{}:
	default:
	}
}

// Events returns what the server saw so far.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Event(nil), s.events...)
}

// Messages returns the messages taken so far.
func (s *Server) Messages() []*Message {
	var out []*Message
	for _, e := range s.Events() {
		if e.Message != nil {
			out = append(out, e.Message)
		}
	}
	return out
}

// To returns the messages taken so far for recipient to.
func (s *Server) To(to string) []*Message {
	var out []*Message
	for _, m := range s.Messages() {
		for _, r := range m.RcptTos {
			if r == to {
				out = append(out, m)
			}
		}
	}
	return out
}

// Wait waits until done reports true of the events so far, each time one
// comes, failing the test after a generous minute.
func (s *Server) Wait(t testing.TB, what string, done func(events []Event) bool) []Event {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		evs := s.Events()
		if done(evs) {
			return evs
		}
		select {
		case <-s.seen:
		case <-timeout:
			t.Fatalf("waited 60 s for %s; the mail server saw %d events", what, len(evs))
		}
	}
}

// WaitTo waits until n messages for recipient to have come, and returns
// them.
func (s *Server) WaitTo(t testing.TB, to string, n int) []*Message {
	t.Helper()
	s.Wait(t, fmt.Sprintf("%d messages to %s", n, to), func([]Event) bool { return len(s.To(to)) >= n })
	return s.To(to)
}

// FreePort is a loopback port nothing listens on just now.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Cert is a self-signed certificate for 127.0.0.1 and localhost, in PEM
// files, and a pool that trusts it.
type Cert struct {
	CertFile, KeyFile string
	Pool              *x509.CertPool
}

// SelfSigned makes a certificate for 127.0.0.1 and localhost, valid for a
// day, in t.TempDir().
func SelfSigned(t testing.TB) *Cert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "askd test mail server"},
		NotBefore:    time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Cert{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"), Pool: x509.NewCertPool()}
	if err := os.WriteFile(c.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(c.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	c.Pool.AddCert(cert)
	return c
}
