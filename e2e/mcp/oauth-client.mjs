// The official MCP TypeScript SDK as an OAuth client of lattice's /mcp, the
// way an MCP host signs a person in: it meets the 401, reads the protected
// resource metadata, discovers the authorization server, registers itself
// there (dynamic client registration, or a Client ID Metadata Document when
// --client-metadata-url names one and the server supports them), sends the
// person to sign in with PKCE and the RFC 8707 `resource`, trades the code
// for a token and lists the tools.
// Usage: node oauth-client.mjs --url URL --login ID --password PW
//          [--scope SCOPE] [--client-metadata-url HTTPS_URL]
// prints one JSON line: {"ok": true, "tools": [names], "resource", "audience",
// "client_id", "scope"} or {"ok": false, "error"} (and exits 1).
// The "browser" is this script: it fills in the provider's login and consent
// forms over HTTP and catches the redirect to the loopback redirect URL,
// which nothing needs to listen on.
import { parseArgs } from 'node:util';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' }, login: { type: 'string' }, password: { type: 'string' },
    scope: { type: 'string' }, 'client-metadata-url': { type: 'string' },
  },
});
const REDIRECT_URL = 'http://127.0.0.1:1/callback';

// A person's browser at the provider: cookies by name (the provider's are
// few and distinctly named), redirects followed by hand until one leaves it.
class Browser {
  cookies = new Map();

  async request(url, init = {}) {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '));
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()];
      const expired = attributes.some((a) => /^\s*expires=Thu, 01 Jan 1970/i.test(a)) || value === '';
      if (expired) this.cookies.delete(name); else this.cookies.set(name, value);
    }
    return response;
  }

  // Opens `url`, signs in and consents as far as asked; returns the
  // redirect that leaves the provider, unvisited.
  async signIn(url, login, password) {
    const origin = new URL(url).origin;
    let response = await this.request(url);
    for (let steps = 0; steps < 20; steps++) {
      const location = response.headers.get('location');
      if (location) {
        const next = new URL(location, url);
        if (next.origin !== origin) return next;
        url = next.href;
        response = await this.request(url);
        continue;
      }
      const page = await response.text();
      if (!response.ok) throw new Error(`${url} answered ${response.status}: ${text(page)}`);
      const form = firstForm(page);
      if (!form) throw new Error(`${url} shows no form: ${text(page)}`);
      if ('password' in form.fields) Object.assign(form.fields, { login, password });
      url = new URL(form.action, url).href;
      response = await this.request(url, { method: 'POST', body: new URLSearchParams(form.fields) });
    }
    throw new Error('signing in took more than twenty steps');
  }
}

function unescape(s) {
  return s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function attribute(tag, name) {
  const match = tag.match(new RegExp(`\\s${name}="([^"]*)"`, 'i'));
  return match && unescape(match[1]);
}

// The page's first form: its action and its inputs' values. The provider
// writes its own plain markup, so a scan of tags is enough.
function firstForm(page) {
  const form = page.match(/<form\b[^>]*>[\s\S]*?<\/form>/i)?.[0];
  if (!form) return undefined;
  const fields = {};
  for (const input of form.match(/<input\b[^>]*>/gi) ?? []) {
    const name = attribute(input, 'name');
    if (name) fields[name] = attribute(input, 'value') ?? '';
  }
  return { action: attribute(form.match(/<form\b[^>]*>/i)[0], 'action'), fields };
}

function text(page) {
  return page.replace(/<(style|script)[\s\S]*?<\/\1>/gi, '').replace(/<[^>]*>/g, ' ').replace(/\s+/g, ' ').trim().slice(0, 400);
}

// What the SDK asks of an OAuth client application, kept in memory.
class MemoryProvider {
  saved = {};
  constructor(browser) { this.browser = browser; }
  get redirectUrl() { return REDIRECT_URL; }
  get clientMetadataUrl() { return args['client-metadata-url']; }
  get clientMetadata() {
    return {
      client_name: 'lattice e2e MCP client', redirect_uris: [REDIRECT_URL], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
      ...(args.scope ? { scope: args.scope } : {}),
    };
  }
  clientInformation() { return this.saved.client; }
  saveClientInformation(client) { this.saved.client = client; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  codeVerifier() { return this.saved.verifier; }
  async redirectToAuthorization(authorizationUrl) {
    this.saved.resource = authorizationUrl.searchParams.get('resource');
    const back = await this.browser.signIn(authorizationUrl.href, args.login, args.password);
    if (back.searchParams.get('error')) throw new Error(`the provider refused: ${back.searchParams.get('error')} ${back.searchParams.get('error_description') ?? ''}`);
    this.saved.code = back.searchParams.get('code');
  }
}

function claimsOf(jwt) {
  try {
    return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString());
  } catch {
    return {};
  }
}

const provider = new MemoryProvider(new Browser());
const client = () => new Client({ name: 'lattice-e2e-oauth', version: '1.0.0' });
let out;
try {
  if (!args.url || !args.login || args.password === undefined) throw new Error('usage: --url URL --login ID --password PW');
  const first = new StreamableHTTPClientTransport(new URL(args.url), { authProvider: provider });
  try {
    await client().connect(first).then(() => first.close());
  } catch (error) {
    // The first connection meets the 401 and ends at the redirect to sign in.
    if (!(error instanceof UnauthorizedError) || !provider.saved.code) throw error;
    await first.finishAuth(provider.saved.code);
  }
  const session = client();
  await session.connect(new StreamableHTTPClientTransport(new URL(args.url), { authProvider: provider }));
  const tools = (await session.listTools()).tools.map((tool) => tool.name);
  await session.close();
  const claims = claimsOf(provider.saved.tokens?.access_token ?? '');
  out = {
    ok: true, tools, resource: provider.saved.resource, audience: claims.aud ?? null,
    client_id: provider.saved.client?.client_id, scope: provider.saved.tokens?.scope ?? null,
  };
} catch (error) {
  out = { ok: false, error: String(error) };
}
console.log(JSON.stringify(out));
process.exit(out.ok ? 0 : 1);
