// An OpenID Connect provider for askd's browser tests (SPEC §15): the npm
// package oidc-provider, an OpenID-certified implementation, with its own
// sign-in and consent pages (devInteractions: any login name, any
// password). Run by internal/web's tests with node, from the directory
// holding its node_modules:
//
//   node oidc-provider.mjs USERS.json CLIENT_ID CLIENT_SECRET REDIRECT_URI SIGNED_OUT_URI
//
// It listens on 127.0.0.1 at a free port, its issuer http://localhost:PORT
// (another site than askd's 127.0.0.1), and prints "issuer URL" once it
// serves. USERS.json maps each login name to its claims; it is read at
// every sign-in, so a test changes a person's groups by rewriting it.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';

const [usersFile, clientId, clientSecret, redirectURI, signedOutURI] = process.argv.slice(2);
// oidc-provider is in the node_modules of the working directory.
const require = createRequire(path.join(process.cwd(), 'package.json'));
const { default: Provider } = await import(require.resolve('oidc-provider'));

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://localhost:${server.address().port}`;

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: [redirectURI],
    post_logout_redirect_uris: [signedOutURI],
    response_types: ['code'],
    grant_types: ['authorization_code'],
  }],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['preferred_username', 'name'],
    groups: ['groups'],
  },
  cookies: { keys: ['askd-test-cookie-key'] },
  features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
  async findAccount(ctx, id) {
    const users = JSON.parse(readFileSync(usersFile, 'utf8'));
    if (!users[id]) return undefined;
    return { accountId: id, async claims() { return { sub: id, ...users[id] }; } };
  },
});
server.on('request', provider.callback());
process.stdout.write(`issuer ${issuer}\n`);
process.on('SIGTERM', () => process.exit(0));
