// A real OpenID Connect provider on loopback for the sign-in tests: the certified `oidc-provider`
// (pinned in package.json) with its development login form, which accepts any login and password.
//
//   node tests/oidc/provider.mjs [--port N] [--client-id ID] [--client-secret S]
//                                [--redirect-uri URI]... [--claims JSON]
//
// Every option also reads an environment variable: OIDC_PORT (0, the default, picks a free port),
// OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URIS (space- or comma-separated) and OIDC_CLAIMS.
// A redirect URI may put `*` in place of its port (`http://localhost:*/oauth2callback`, the default
// with its 127.0.0.1 twin), so app processes on any loopback port share one client.
// OIDC_CLAIMS maps a login to extra claims, e.g. {"ada@school.test": {"roles": ["instructor"]}}, and
// OIDC_CLAIMS_FILE names a JSON file of the same shape read again at every sign-in (so a running
// provider can give a login new claims). They are released with the `profile` scope, so they reach
// Streamlit's st.user. The claims that can be released are `roles`, `groups`, those named in
// OIDC_CLAIMS and those listed (space-separated) in OIDC_CLAIM_NAMES.
// Prints `ready <issuer>` on stdout once listening, and exits cleanly on SIGTERM or SIGINT.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider, { interactionPolicy } from 'oidc-provider';

const { values: args } = parseArgs({
  options: {
    port: { type: 'string' },
    'client-id': { type: 'string' },
    'client-secret': { type: 'string' },
    'redirect-uri': { type: 'string', multiple: true },
    claims: { type: 'string' },
  },
});

const port = Number(args.port ?? process.env.OIDC_PORT ?? 0);
const clientId = args['client-id'] ?? process.env.OIDC_CLIENT_ID ?? 'faultlines-tests';
const clientSecret = args['client-secret'] ?? process.env.OIDC_CLIENT_SECRET ?? 'faultlines-tests-secret';
const redirectPatterns = args['redirect-uri']
  ?? (process.env.OIDC_REDIRECT_URIS || 'http://localhost:*/oauth2callback http://127.0.0.1:*/oauth2callback')
    .split(/[\s,]+/).filter(Boolean);
const extraClaims = JSON.parse(args.claims ?? process.env.OIDC_CLAIMS ?? '{}');
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  throw new Error(`port must be 0-65535, not ${args.port ?? process.env.OIDC_PORT}`);
}
if (typeof extraClaims !== 'object' || extraClaims === null || Array.isArray(extraClaims)) {
  throw new Error('claims must be a JSON object mapping a login to its extra claims');
}

// `*` stands for any port; the registered URI (which must be a plain URL) drops the port instead.
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const patterns = redirectPatterns.map((uri) => new RegExp(`^${uri.split(':*').map(escape).join(':\\d{1,5}')}$`));
const registered = redirectPatterns.map((uri) => uri.replace(':*', ''));
const allowed = (uri) => patterns.some((pattern) => pattern.test(uri));

const claimsFile = process.env.OIDC_CLAIMS_FILE;
const claimsOf = (login) => ({
  ...extraClaims[login], ...(claimsFile ? JSON.parse(readFileSync(claimsFile, 'utf8'))[login] : undefined),
});

// Claims each scope releases: the standard ones, and the extra ones under `profile`.
const extraNames = [...new Set(['roles', 'groups', ...Object.values(extraClaims).flatMap(Object.keys),
  ...(process.env.OIDC_CLAIM_NAMES || '').split(/\s+/).filter(Boolean)])];
const claimsByScope = {
  openid: ['sub'],
  email: ['email', 'email_verified'],
  profile: ['name', ...extraNames.filter((name) => !['sub', 'email', 'email_verified', 'name'].includes(name))],
};

function accountClaims(login) {
  const email = login.includes('@') ? login : `${login}@example.test`;
  return { sub: login, email, email_verified: true, name: email.split('@')[0], ...claimsOf(login) };
}

// Streamlit's st.login asks for prompt=select_account (as Google offers). This provider lets the user
// select an account with its login form: the prompt is accepted, and while it is pending the login
// prompt asks for the form again even when the provider still remembers a session.
const policy = interactionPolicy.base();
const login = policy.get('login');
login.checks.add(new interactionPolicy.Check('select_account', 'the client asked to select an account',
  'account_selection_required', (ctx) => (ctx.oidc.prompts.has('select_account') && !ctx.oidc.result?.login
    ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT)));
const selectAccount = new interactionPolicy.Prompt({ name: 'select_account', requestable: true });
selectAccount.checks.clear();   // resolved by the login form above, never an interaction of its own
policy.add(selectAccount);

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
// The issuer names the port, so bind first (port 0 picks one), then build the provider on that address.
const server = createServer();
const issuer = await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}`));
});

const provider = new Provider(issuer, {
  clients: [{
    client_id: clientId,
    client_secret: clientSecret,
    redirect_uris: registered,
    post_logout_redirect_uris: registered,
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'tests', alg: 'RS256', use: 'sig' }] },
  cookies: { keys: [randomBytes(32).toString('hex')] },
  claims: claimsByScope,
  // Authlib (st.login) reads the user from the ID token, never from the userinfo endpoint, so the
  // claims of every granted scope go into the ID token too.
  conformIdTokenClaims: false,
  findAccount: (ctx, sub) => ({ accountId: sub, claims: () => accountClaims(sub) }),
  interactions: { policy },
  // The app is this provider's own first-party client, as a school's registered app is: the scopes
  // it asks for are granted without a consent screen.
  async loadExistingGrant(ctx) {
    const grantId = ctx.oidc.result?.consent?.grantId || ctx.oidc.session.grantIdFor(ctx.oidc.client.clientId);
    if (grantId) return ctx.oidc.provider.Grant.find(grantId);
    if (!ctx.oidc.session.accountId) return undefined;   // nobody signed in yet: the login form comes first
    const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope('openid email profile');
    grant.addOIDCClaims(Object.values(claimsByScope).flat());
    await grant.save();
    return grant;
  },
  features: {
    devInteractions: { enabled: true },
    rpInitiatedLogout: {
      enabled: true,
      // st.logout sends the browser here; confirm it at once (as Keycloak does with an id_token_hint)
      // so the user lands back on the app. The button stays for a browser without script.
      async logoutSource(ctx, form) {
        ctx.body = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Signing out</title></head>
<body>${form}<button type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>
<script>const f = document.getElementById('op.logoutForm'); const y = document.createElement('input');
y.type = 'hidden'; y.name = 'logout'; y.value = 'yes'; f.appendChild(y); f.submit();</script></body></html>`;
      },
    },
  },
  pkce: { required: () => false },   // Streamlit sends S256 anyway, since the metadata offers it
  ttl: { Session: 24 * 3600, Grant: 24 * 3600 },
});
provider.Client.prototype.redirectUriAllowed = function redirectUriAllowed(uri) { return allowed(uri); };
provider.Client.prototype.postLogoutRedirectUriAllowed = function postLogoutAllowed(uri) { return allowed(uri); };

server.on('request', provider.callback());
process.stdout.write(`ready ${issuer}\n`);

function shutdown() {
  server.close(() => process.exit(0));
  server.closeAllConnections();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
