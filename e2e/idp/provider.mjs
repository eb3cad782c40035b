// An OpenID provider for lattice's tests and local stack: oidc-provider (OpenID
// Certified), run as a real process on plain http://127.0.0.1. Usage:
//   node e2e/idp/provider.mjs CONFIG.json
// prints `ready <issuer>` on stdout once listening, and exits when stdin closes
// (so it never outlives the test that started it) or on SIGTERM.
// The config's format is in README.md beside this file.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import * as querystring from 'node:querystring';

import Provider, { errors } from 'oidc-provider';

// stdout carries only the ready line: the provider's notices go to stderr.
console.info = console.error;

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const accounts = new Map((config.accounts ?? []).map((account) => [account.id, account]));
const resources = new Map((config.resources ?? []).map((resource) => [resource.indicator, resource]));

// Without keys (the local stack) the provider signs with a key made now; a test
// passes its own so it can forge tokens the provider's JWKS vouches for.
const jwks = config.keys ?? {
  keys: [{ ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }), kid: 'generated', alg: 'ES256', use: 'sig' }],
};
const signingAlg = jwks.keys[0].alg ?? { RSA: 'RS256', EC: 'ES256', OKP: 'EdDSA' }[jwks.keys[0].kty];

const day = 24 * 60 * 60;
const ttl = {
  AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, RefreshToken: 14 * day,
  Interaction: 3600, Session: 14 * day, Grant: 14 * day, ...config.ttl,
};

// Listen first, so `port: 0` gives a free port and the issuer names it. In a
// container (compose) it listens on every address, under the name the
// services reach it by.
const server = createServer();
await new Promise((resolve) => server.listen(config.port ?? 0, config.host ?? '127.0.0.1', resolve));
const issuer = config.issuer ?? `http://127.0.0.1:${server.address().port}`;

// Claims beyond the standard ones (a tenant, anything a hostile test adds)
// come with the `openid` scope, so every ID token carries them.
const scoped = { profile: ['name', 'preferred_username'], email: ['email', 'email_verified'], groups: ['groups'] };
const extraClaims = [...new Set([...accounts.values()].flatMap((account) => Object.keys(account.claims ?? {})))]
  .filter((claim) => claim !== 'sub' && !Object.values(scoped).flat().includes(claim));

const provider = new Provider(issuer, {
  // oidc-provider puts `sid` in ID tokens and logout tokens only for clients
  // with backchannel_logout_session_required; a client with a back-channel
  // logout URI has it unless it says otherwise (it matches sessions by sid).
  clients: (config.clients ?? []).map((client) => ({
    ...(client.backchannel_logout_uri ? { backchannel_logout_session_required: true } : {}),
    ...client,
  })),
  jwks,
  clientDefaults: { id_token_signed_response_alg: signingAlg },
  cookies: { keys: [randomBytes(32).toString('base64url')] },
  async findAccount(ctx, id) {
    const account = accounts.get(id);
    return account && { accountId: id, claims: async () => ({ ...account.claims, sub: id }) };
  },
  claims: { openid: ['sub', ...extraClaims], ...scoped },
  // The resources' scopes too: a client may register with them (the MCP SDK
  // registers with the scopes the resource's metadata lists).
  scopes: ['openid', 'offline_access', ...[...resources.values()].flatMap((resource) => resource.scopes ?? [])],
  // Scope-requested claims in the ID token too, as most company providers do;
  // `conformIdTokenClaims: true` keeps them to the userinfo endpoint (OIDC Core).
  conformIdTokenClaims: config.conformIdTokenClaims ?? false,
  pkce: { required: () => true },
  // Lifetimes in seconds; a resource's own accessTokenTTL comes first.
  ttl: { ...ttl, AccessToken: (ctx, token) => token.resourceServer?.accessTokenTTL ?? ttl.AccessToken },
  // What lattice reads from an access token for its resources.
  async extraTokenClaims(ctx, token) {
    const account = token.kind === 'AccessToken' && accounts.get(token.accountId);
    if (!account) return undefined;
    const { sub, ...claims } = account.claims ?? {};
    return claims;
  },
  features: {
    // The provider's own login and consent pages; the password check is below.
    devInteractions: { enabled: true },
    backchannelLogout: { enabled: true },
    rpInitiatedLogout: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: false },
    clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf,
      // A client that asked for a resource at the authorization endpoint may
      // leave it out at the token endpoint.
      useGrantedResource: async () => true,
      async getResourceServerInfo(ctx, indicator) {
        const resource = resources.get(indicator);
        if (!resource) throw new errors.InvalidTarget(`unknown resource ${indicator}`);
        return {
          scope: (resource.scopes ?? []).join(' '),
          audience: resource.audience ?? indicator,
          accessTokenFormat: 'jwt',
          accessTokenTTL: resource.accessTokenTTL,
          jwt: { sign: { alg: signingAlg } },
        };
      },
    },
  },
  // Everything in a test is on loopback, which the provider's guard against
  // server-side request forgery refuses (back-channel logout, client metadata
  // documents): this provider only ever calls the test's own listeners.
  fetch: (url, { dispatcher, ...options }) => fetch(url, options),
});

// devInteractions signs in any login with any password; a test must sign in
// as a given account, and a wrong password must fail. So the login form's
// post is checked here first; the provider then reads the body parsed here.
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && /^\/interaction\/[^/]+$/.test(ctx.path) && ctx.is('application/x-www-form-urlencoded')) {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const form = querystring.parse(Buffer.concat(chunks).toString());
    ctx.request.body = form;
    if (form.prompt === 'login' && (!accounts.has(form.login) || accounts.get(form.login).password !== form.password)) {
      ctx.status = 401;
      ctx.type = 'html';
      ctx.body = `<!DOCTYPE html><title>Sign-in failed</title><p>Wrong login or password.</p><a href="${ctx.path}">Try again</a>`;
      return;
    }
  }
  await next();
});

// Why a request failed, for the test's log.
for (const event of ['server_error', 'authorization.error', 'grant.error', 'end_session.error', 'registration_create.error',
  'revocation.error', 'userinfo.error', 'jwks.error', 'discovery.error', 'backchannel.error']) {
  provider.on(event, (ctx, error) => console.error(`${event}: ${error?.message ?? error} ${error?.error_description ?? ''}`));
}

server.on('request', provider.callback());
process.stdout.write(`ready ${issuer}\n`);

// A container's stdin is closed from the start: there it lives until stopped.
if (config.exitWithStdin ?? true) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('close', () => process.exit(0));
  process.stdin.resume();
}
process.on('SIGTERM', () => process.exit(0));
