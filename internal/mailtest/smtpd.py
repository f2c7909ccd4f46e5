"""askd's test mail server: Debian's aiosmtpd on loopback.

Each message it takes is read with Python's email package as a mail client
reads it (policy.default: headers decoded, MIME parts and their transfer
encodings undone) and printed as one JSON line on stdout, with what a
client would make of its HTML part (its links, its text, its tags). What
the client did is printed too: each AUTH it tried (and whether over TLS),
each MAIL FROM, each recipient refused, each message held. Options (see
main) choose STARTTLS, implicit TLS, authentication, refused recipients and
a slow reply to DATA (held until the test says, or for some seconds).
"""

import argparse
import asyncio
import email
import json
import ssl
import logging
import sys
import threading
import warnings
from email import policy
from html.parser import HTMLParser

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

# aiosmtpd 1.4 warns of its own use of a deprecated attribute at each AUTH.
warnings.filterwarnings("ignore", message="Session.login_data")
# ...and of AUTH offered without TLS, which --auth-in-clear means.
warnings.filterwarnings("ignore", message="Requiring AUTH while not requiring TLS")
# A client that refuses the certificate, or hangs up, is what some tests
# are about: aiosmtpd's tracebacks of it would only be noise.
logging.getLogger("mail.log").setLevel(logging.CRITICAL)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


class HTMLRead(HTMLParser):
    """What a mail client's HTML view holds: its links, text and tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.hrefs, self.urls, self.text, self.tags = [], [], [], set()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        for name, value in attrs:
            if tag == "a" and name == "href":
                self.hrefs.append(value or "")
            elif value and (":" in value and "//" in value or name in ("src", "action", "formaction", "background")):
                self.urls.append(value)

    def handle_data(self, data):
        self.text.append(data)


def is_tls(server, session):
    if session.ssl is not None:
        return True
    t = server.transport
    return t is not None and t.get_extra_info("ssl_object") is not None


class Handler:
    def __init__(self, args):
        self.refuse = set(args.refuse or [])
        self.delay = args.delay_data
        self.hold = asyncio.Semaphore(0) if args.hold_data else None

    def read_stdin(self, loop):
        """Lines on stdin: "release" answers one held DATA (--hold-data);
        "sync" prints a sync event, after every line printed before it."""
        def read():
            for line in sys.stdin:
                if line.strip() == "release" and self.hold is not None:
                    loop.call_soon_threadsafe(self.hold.release)
                elif line.strip() == "sync":
                    loop.call_soon_threadsafe(emit, {"event": "sync"})
        threading.Thread(target=read, daemon=True).start()

    async def handle_MAIL(self, server, session, envelope, address, mail_options):
        emit({"event": "mail", "from": address, "tls": is_tls(server, session)})
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if address in self.refuse:
            emit({"event": "refused", "to": address})
            return "550 5.1.1 <%s>: no such user here" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.hold is not None:
            emit({"event": "held"})
            await self.hold.acquire()
        msg = email.message_from_bytes(envelope.original_content or envelope.content, policy=policy.default)
        out = {
            "event": "message",
            "mail_from": envelope.mail_from,
            "rcpt_tos": envelope.rcpt_tos,
            "tls": is_tls(server, session),
            "auth": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
            "headers": {},
            "raw_headers": {},
            "content_type": msg.get_content_type(),
            "parts": [],
            "defects": [str(d) for d in msg.defects],
        }
        for name in set(msg.keys()):
            out["headers"][name.lower()] = [str(v) for v in msg.get_all(name)]
        for name, value in msg.raw_items():
            out["raw_headers"].setdefault(name.lower(), []).append(value)
        for part in msg.walk():
            if part.is_multipart():
                continue
            text = part.get_content()
            p = {"type": part.get_content_type(), "charset": part.get_content_charset(),
                 "encoding": part.get("Content-Transfer-Encoding", ""), "text": text,
                 "defects": [str(d) for d in part.defects]}
            if p["type"] == "text/html":
                h = HTMLRead()
                h.feed(text)
                h.close()
                p.update(hrefs=h.hrefs, urls=h.urls, html_text="".join(h.text), tags=sorted(h.tags))
            out["parts"].append(p)
        emit(out)
        return "250 2.0.0 Message accepted"


class LoggedSMTP(SMTP):
    """An SMTP session that prints each AUTH it is sent, before anything
    else happens to it: an AUTH in the clear shows here whatever the reply."""

    async def smtp_AUTH(self, arg):
        emit({"event": "auth", "tls": is_tls(self, self.session), "arg": arg})
        return await super().smtp_AUTH(arg)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--starttls", nargs=2, metavar=("CERT", "KEY"), help="offer STARTTLS with this certificate")
    ap.add_argument("--smtps", nargs=2, metavar=("CERT", "KEY"), help="TLS from the first byte with this certificate")
    ap.add_argument("--auth", metavar="USER:PASSWORD", help="require AUTH as this user")
    ap.add_argument("--auth-in-clear", action="store_true", help="offer AUTH without TLS too (to see that no client uses it)")
    ap.add_argument("--refuse", action="append", metavar="ADDRESS", help="refuse this recipient with 550")
    ap.add_argument("--delay-data", type=float, default=0, help="seconds to wait before answering DATA")
    ap.add_argument("--hold-data", action="store_true", help="answer each DATA only once a release line comes on stdin")
    args = ap.parse_args()

    def authenticator(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and args.auth == "%s:%s" % (auth_data.login.decode(), auth_data.password.decode())
        return AuthResult(success=ok, auth_data=auth_data if ok else None)

    def context(pair):
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(pair[0], pair[1])
        return ctx

    kw = {"hostname": "mail.test"}
    if args.starttls:
        kw["tls_context"] = context(args.starttls)
    if args.auth:
        kw.update(authenticator=authenticator, auth_required=True, auth_require_tls=not args.auth_in_clear)
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    handler = Handler(args)
    handler.read_stdin(loop)
    server = loop.run_until_complete(loop.create_server(
        lambda: LoggedSMTP(handler, loop=loop, **kw), host="127.0.0.1", port=args.port,
        ssl=context(args.smtps) if args.smtps else None))
    emit({"event": "ready", "port": server.sockets[0].getsockname()[1]})
    try:
        loop.run_forever()
    finally:
        server.close()


if __name__ == "__main__":
    main()
