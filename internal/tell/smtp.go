package tell

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/smtp"
	"net/textproto"
	"net/url"
	"strings"
)

// Sending mail (askd serve --notify-smtp; SPEC §16). One SMTP connection
// per mail, by the standard library's net/smtp: implicit TLS (smtps://),
// or STARTTLS on smtp://, the server's certificate verified. Without TLS
// nothing is sent, unless the operator said --notify-smtp-insecure, which
// only a loopback server may be given (a relay on this machine); it also
// takes any certificate. With a user, askd authenticates (AUTH PLAIN) only
// over TLS, smtps or a STARTTLS that succeeded: a server that offers no
// STARTTLS gets nothing, not even the message, and the log says why.
//
// A reply of 5xx to the recipient or the message is permanent (a refused
// address: logged, and the delivery given up; every other person's mail is
// a delivery of its own); anything else, a server down or slow, 4xx, is
// retried with the outbox's backoff. Each attempt is bounded by the
// worker's timeout, and a slow server holds one of the worker's sends, not
// the others.

// Mail configures sending mail (askd serve --notify-smtp and its flags).
type Mail struct {
	Server SMTPServer
	// User and Password authenticate, over TLS only; no user: none.
	User, Password string
	// From is the sender's address, one mailbox (--notify-email-from).
	From string
	// Insecure lets a loopback server be reached without TLS and with any
	// certificate (--notify-smtp-insecure); askd serve refuses it for a
	// server that is not (SMTPServer.Loopback).
	Insecure bool
	// RootCAs verify the server's certificate; nil: the system's. Tests
	// give their own.
	RootCAs *x509.CertPool
}

// SMTPServer is where mail goes: --notify-smtp smtp://HOST:PORT (STARTTLS)
// or smtps://HOST:PORT (TLS from the first byte).
type SMTPServer struct {
	Host, Port string
	TLS        bool // smtps
}

func (s SMTPServer) String() string {
	scheme := "smtp"
	if s.TLS {
		scheme = "smtps"
	}
	return scheme + "://" + net.JoinHostPort(s.Host, s.Port)
}

// ParseSMTP reads --notify-smtp: smtp://HOST:PORT or smtps://HOST:PORT,
// nothing else (no user or password in it: those come from their flags,
// the password from a file).
func ParseSMTP(raw string) (SMTPServer, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "smtp" && u.Scheme != "smtps" || u.Hostname() == "" || u.Port() == "" {
		return SMTPServer{}, fmt.Errorf("%q is not smtp://HOST:PORT or smtps://HOST:PORT (e.g. smtp://mail.example.com:587, smtps://mail.example.com:465)", raw)
	}
	if u.User != nil {
		return SMTPServer{}, errors.New("the URL may not hold a user or password: give --notify-smtp-user and --notify-smtp-password-file")
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return SMTPServer{}, fmt.Errorf("%q: only smtp://HOST:PORT or smtps://HOST:PORT, without a path or query", raw)
	}
	return SMTPServer{Host: u.Hostname(), Port: u.Port(), TLS: u.Scheme == "smtps"}, nil
}

// Loopback reports whether s names this machine: localhost, or a loopback
// address.
func (s SMTPServer) Loopback() bool {
	if strings.EqualFold(s.Host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(s.Host)
	return err == nil && ip.IsLoopback()
}

// errNoTLS is a server that offers no STARTTLS where askd must not send in
// the clear.
type errNoTLS struct{ why string }

func (e *errNoTLS) Error() string { return e.why }

// sendMail sends msg to one recipient through the SMTP server, within
// ctx's deadline.
func (w *Worker) sendMail(ctx context.Context, to string, msg []byte) error {
	m := w.opts.Mail
	srv := m.Server
	c, err := w.dialSMTP(ctx, srv)
	if err != nil {
		return &failure{msg: fmt.Sprintf("email: %s: %s", srv, oneLine(err.Error()))}
	}
	defer c.Close()
	fail := func(step string, err error) error {
		var tp *textproto.Error
		permanent := errors.As(err, &tp) && tp.Code >= 500
		return &failure{msg: fmt.Sprintf("email to %s: %s: %s", to, step, oneLine(err.Error())), permanent: permanent}
	}
	if err := w.secure(c, srv); err != nil {
		var notls *errNoTLS
		if errors.As(err, &notls) {
			w.log.Warn("email: not sent: "+notls.why, "smtp", srv.String(), "to", to)
			return &failure{msg: "email: " + notls.why}
		}
		return fail("STARTTLS", err)
	}
	if m.User != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return &failure{msg: fmt.Sprintf("email: %s offers no AUTH, and --notify-smtp-user is set", srv)}
		}
		if err := c.Auth(smtp.PlainAuth("", m.User, m.Password, srv.Host)); err != nil {
			return fail("AUTH", err)
		}
	}
	if err := c.Mail(m.From); err != nil {
		return fail("MAIL FROM", err)
	}
	if err := c.Rcpt(to); err != nil {
		return fail("RCPT TO", err)
	}
	wc, err := c.Data()
	if err != nil {
		return fail("DATA", err)
	}
	if _, err := wc.Write(msg); err != nil {
		return fail("DATA", err)
	}
	if err := wc.Close(); err != nil { // the server's reply to the message
		return fail("the message", err)
	}
	_ = c.Quit() // sent: a lost reply to QUIT changes nothing
	return nil
}

// dialSMTP connects to srv (with TLS for smtps), the connection bounded by
// ctx: its deadline, and closed when ctx ends.
func (w *Worker) dialSMTP(ctx context.Context, srv SMTPServer) (*smtp.Client, error) {
	addr := net.JoinHostPort(srv.Host, srv.Port)
	var conn net.Conn
	var err error
	if srv.TLS {
		d := tls.Dialer{Config: w.tlsConfig(srv)}
		conn, err = d.DialContext(ctx, "tcp", addr)
	} else {
		var d net.Dialer
		conn, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	c, err := smtp.NewClient(conn, srv.Host)
	if err != nil {
		stop()
		conn.Close()
		return nil, err
	}
	if err := c.Hello(w.messageHost()); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// secure makes c's connection TLS by STARTTLS when it is not already
// (smtps), or says why nothing may be sent without (errNoTLS).
func (w *Worker) secure(c *smtp.Client, srv SMTPServer) error {
	m := w.opts.Mail
	if srv.TLS {
		return nil
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		return c.StartTLS(w.tlsConfig(srv))
	}
	switch {
	case m.User != "":
		return &errNoTLS{fmt.Sprintf("%s offers no STARTTLS, and askd authenticates (--notify-smtp-user) only over TLS: use smtps://, or a server that offers STARTTLS", srv)}
	case !m.Insecure:
		return &errNoTLS{fmt.Sprintf("%s offers no STARTTLS, and askd sends mail only over TLS (--notify-smtp-insecure allows a loopback server without)", srv)}
	}
	return nil
}

// tlsConfig verifies srv's certificate for its host, unless Insecure.
func (w *Worker) tlsConfig(srv SMTPServer) *tls.Config {
	m := w.opts.Mail
	return &tls.Config{ServerName: srv.Host, RootCAs: m.RootCAs, InsecureSkipVerify: m.Insecure, MinVersion: tls.VersionTLS12}
}
