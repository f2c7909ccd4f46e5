// A webhook receiver on loopback, as an integrator writes one: it verifies
// each delivery with the official Standard Webhooks library, given the
// base64 of askd's secret's UTF-8 bytes (one for /tell, one for /notify),
// and answers 204 when it verifies, 400 with the library's reason when it
// does not. ?later=N verifies as if N seconds had passed since it came: a
// delivery replayed later. It prints its port, then each request, as lines
// of JSON on standard output.
"use strict";
const http = require("node:http");
const { Webhook } = require("standardwebhooks");

const secrets = { "/tell": process.argv[2], "/notify": process.argv[3] };

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const body = Buffer.concat(chunks);
    const url = new URL(req.url, "http://receiver");
    const later = Number(url.searchParams.get("later") || 0);
    let verdict = "verified";
    const now = Date.now;
    Date.now = () => now() + later * 1000; // the library reads the time from Date.now
    try {
      new Webhook(secrets[url.pathname]).verify(body, req.headers);
    } catch (err) {
      verdict = String(err.message);
    } finally {
      Date.now = now;
    }
    console.log(JSON.stringify({ path: url.pathname, later, verdict, headers: req.headers, body: body.toString("base64") }));
    res.writeHead(verdict === "verified" ? 204 : 400);
    res.end(verdict === "verified" ? "" : verdict);
  });
});
server.listen(0, "127.0.0.1", () => console.log(JSON.stringify({ port: server.address().port })));
