// A remote MCP server protected by OAuth, as the MCP authorization spec
// (2025-11-25) has one: a resource server that takes only JWT access tokens
// (RFC 9068) an OpenID provider issued for it (RFC 8707's resource, the
// token's `aud`), says where to get one (RFC 9728 protected resource
// metadata, named in every 401's WWW-Authenticate) and asks for more scope
// with 403 insufficient_scope (step-up). The official MCP SDK's server over
// Streamable HTTP, stateful: every session has its own notes, and belongs to
// the person whose token opened it. For lattice's tests of its MCP client
// (crates/testkit/src/protected.rs starts it). Usage:
//   node e2e/mcp/protected-server.mjs CONFIG.json
// CONFIG.json:
//   {"port": 0, "issuer": "http://127.0.0.1:PORT", "audience": "optional, else this server's /mcp URL",
//    "scopes_supported": ["notes:read", "notes:write"], "required_scope": "notes:read", "name": "notes"}
// prints `ready <its /mcp URL>` on stdout once listening, and exits when stdin
// closes or on SIGTERM. Tools:
//   whoami            the token's sub, preferred_username, scope, client_id
//   add_note {text}   keeps a note in this session
//   list_notes        this session's notes
//   write_note {text} the same as add_note, with the notes:write scope only
//                     (without it: HTTP 403 insufficient_scope, before the tool runs)
// Every request is logged to stderr (method, path, the JSON-RPC method, the
// token's sub and the answer's status; never a token). `GET /_test/seen`
// (a test's endpoint, no auth) tells what it saw: valid tokens by sub, the
// refusals by reason, and the sessions by person.
import { createHash, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { z } from 'zod';

const log = (line) => process.stderr.write(`protected-server: ${line}\n`);

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
if (!config.issuer) throw new Error('the config names no issuer');
const name = config.name ?? 'notes';
const scopesSupported = config.scopes_supported ?? ['notes:read', 'notes:write'];
const requiredScope = config.required_scope ?? 'notes:read';
const WRITE_SCOPE = 'notes:write';

// The provider's keys, from its discovery document (its issuer must be the
// one configured, as OpenID Connect Discovery says).
const discoveryUrl = `${config.issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
let discovery;
try {
  const response = await fetch(discoveryUrl);
  if (!response.ok) throw new Error(`answered ${response.status}`);
  discovery = await response.json();
} catch (error) {
  log(`cannot read the provider's discovery document ${discoveryUrl}: ${error.message}`);
  process.exit(1);
}
if (discovery.issuer !== config.issuer) {
  log(`the discovery document names the issuer ${discovery.issuer}, not ${config.issuer}`);
  process.exit(1);
}
const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));

const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(config.port ?? 0, '127.0.0.1', resolve);
});
const origin = `http://127.0.0.1:${server.address().port}`;
const mcpUrl = `${origin}/mcp`;
const audience = config.audience ?? mcpUrl;
const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
const metadata = {
  resource: mcpUrl,
  authorization_servers: [config.issuer],
  scopes_supported: scopesSupported,
  bearer_methods_supported: ['header'],
  resource_name: name,
};

// What a test asks GET /_test/seen for.
const seen = { subjects: {}, refused: { missing_token: 0, invalid_token: 0, insufficient_scope: 0, session_of_another: 0 } };
const sessions = new Map(); // mcp-session-id -> {sub, notes, transport}

/** A parameter value of WWW-Authenticate: RFC 6750 allows no `"` or `\` there. */
const quoted = (value) => `"${String(value).replace(/[^\x20-\x7e]|["\\]/g, "'").slice(0, 200)}"`;

function challenge(res, status, params, description) {
  const all = { ...params, ...(description ? { error_description: description } : {}) };
  const header = `Bearer ${Object.entries(all).map(([key, value]) => `${key}=${quoted(value)}`).join(', ')}`;
  res.writeHead(status, { 'content-type': 'application/json', 'www-authenticate': header });
  // Without a token the header names no error (RFC 6750 §3.1); the body says why.
  res.end(JSON.stringify({ error: params.error ?? 'unauthorized', error_description: description ?? 'a Bearer access token is required' }));
}

/** The verified claims of the request's bearer token, or a reason to refuse it. */
async function authenticate(req) {
  const header = req.headers.authorization;
  const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(header ?? '');
  if (!header) return { refused: 'missing_token' };
  if (!match) return { refused: 'invalid_token', description: 'not a Bearer token' };
  try {
    const { payload } = await jwtVerify(match[1], jwks, {
      issuer: config.issuer,
      audience,
      typ: 'at+jwt',
      algorithms: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'],
      requiredClaims: ['sub', 'exp'],
    });
    const token = createHash('sha256').update(match[1]).digest('hex');
    return { claims: payload, token, scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [] };
  } catch (error) {
    return { refused: 'invalid_token', description: error.message };
  }
}

/** The JSON-RPC requests of a body (one, or a batch). */
const requests = (body) => (Array.isArray(body) ? body : [body]).filter((m) => m && typeof m === 'object');
const needsWrite = (body) => requests(body).some((m) => m.method === 'tools/call' && m.params?.name === 'write_note');

const text = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value });

/** A new session's MCP server: its tools keep their notes in `session`. */
function sessionServer(session) {
  const mcp = new McpServer({ name, version: '1.0.0' });
  mcp.registerTool('whoami', {
    description: 'Who the access token of this request names',
    inputSchema: {},
    outputSchema: { sub: z.string(), preferred_username: z.string().optional(), scope: z.string(), client_id: z.string().optional() },
  }, async (_args, extra) => {
    const claims = extra.authInfo?.extra?.claims ?? {};
    return text({ sub: claims.sub, preferred_username: claims.preferred_username, scope: claims.scope ?? '', client_id: claims.client_id });
  });
  mcp.registerTool('add_note', {
    description: 'Keeps a note in this session',
    inputSchema: { text: z.string() },
    outputSchema: { count: z.number() },
  }, async ({ text: note }) => {
    session.notes.push(note);
    return text({ count: session.notes.length });
  });
  mcp.registerTool('list_notes', {
    description: "This session's notes",
    inputSchema: {},
    outputSchema: { notes: z.array(z.string()) },
  }, async () => text({ notes: session.notes }));
  mcp.registerTool('write_note', {
    description: `Keeps a note in this session; needs the ${WRITE_SCOPE} scope`,
    inputSchema: { text: z.string() },
    outputSchema: { count: z.number() },
  }, async ({ text: note }, extra) => {
    // The HTTP layer refused it already without the scope; this is the second lock.
    if (!extra.authInfo?.scopes?.includes(WRITE_SCOPE)) {
      return { isError: true, content: [{ type: 'text', text: `needs the ${WRITE_SCOPE} scope` }] };
    }
    session.notes.push(note);
    return text({ count: session.notes.length });
  });
  return mcp;
}

function rpcError(res, status, message) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: status === 400 && message.startsWith('Parse') ? -32700 : -32000, message }, id: null }));
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

async function handleMcp(req, res, note) {
  const auth = await authenticate(req);
  if (auth.refused === 'missing_token') {
    seen.refused.missing_token++;
    return challenge(res, 401, { resource_metadata: metadataUrl, scope: requiredScope });
  }
  if (auth.refused) {
    seen.refused.invalid_token++;
    note.refused = auth.description;
    return challenge(res, 401, { error: 'invalid_token', resource_metadata: metadataUrl, scope: requiredScope }, auth.description);
  }
  const { claims } = auth;
  note.sub = claims.sub;
  const subject = (seen.subjects[claims.sub] ??= { requests: 0, tokens: 0, token_hashes: new Set(), scopes: [], client_ids: [] });
  subject.requests++;
  if (!subject.token_hashes.has(auth.token)) {
    subject.token_hashes.add(auth.token);
    subject.tokens++;
  }
  for (const scope of auth.scopes) if (!subject.scopes.includes(scope)) subject.scopes.push(scope);
  if (claims.client_id && !subject.client_ids.includes(claims.client_id)) subject.client_ids.push(claims.client_id);

  if (!auth.scopes.includes(requiredScope)) {
    seen.refused.insufficient_scope++;
    return challenge(res, 403, { error: 'insufficient_scope', scope: requiredScope, resource_metadata: metadataUrl }, `needs the ${requiredScope} scope`);
  }

  let body;
  if (req.method === 'POST') {
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return rpcError(res, 400, 'Parse error: the body is not JSON');
    }
    note.rpc = requests(body).map((m) => (m.method === 'tools/call' ? `tools/call:${m.params?.name}` : m.method)).join(',');
    if (needsWrite(body) && !auth.scopes.includes(WRITE_SCOPE)) {
      seen.refused.insufficient_scope++;
      const scope = [...new Set([requiredScope, WRITE_SCOPE])].join(' ');
      note.refused = `write_note without ${WRITE_SCOPE}`;
      return challenge(res, 403, { error: 'insufficient_scope', scope, resource_metadata: metadataUrl }, `write_note needs the ${WRITE_SCOPE} scope`);
    }
  }
  req.auth = { clientId: claims.client_id, scopes: auth.scopes, expiresAt: claims.exp, extra: { claims } };

  const id = req.headers['mcp-session-id'];
  if (id) {
    const session = sessions.get(id);
    // Another person's session is, to them, no session at all.
    if (session && session.sub !== claims.sub) seen.refused.session_of_another++;
    if (!session || session.sub !== claims.sub) return rpcError(res, 404, 'Session not found');
    return session.transport.handleRequest(req, res, body);
  }
  if (req.method !== 'POST' || !requests(body).some(isInitializeRequest)) {
    return rpcError(res, 400, 'Bad Request: No valid session ID provided');
  }
  const session = { sub: claims.sub, notes: [], transport: undefined };
  session.transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sessionId) => {
      sessions.set(sessionId, session);
      note.session = sessionId;
    },
  });
  session.transport.onclose = () => {
    if (session.transport.sessionId) sessions.delete(session.transport.sessionId);
  };
  await sessionServer(session).connect(session.transport);
  return session.transport.handleRequest(req, res, body);
}

function json(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

server.on('request', async (req, res) => {
  const path = new URL(req.url, origin).pathname;
  const note = {};
  res.on('finish', () => {
    const parts = [req.method, path, `sub=${note.sub ?? '-'}`];
    if (note.rpc) parts.push(`rpc=${note.rpc}`);
    if (note.session) parts.push(`new-session=${note.session}`);
    parts.push(`-> ${res.statusCode}`);
    if (note.refused) parts.push(`(${note.refused})`);
    log(parts.join(' '));
  });
  try {
    if (path === '/mcp') return await handleMcp(req, res, note);
    if (req.method === 'GET' && (path === '/.well-known/oauth-protected-resource/mcp' || path === '/.well-known/oauth-protected-resource')) {
      return json(res, 200, metadata);
    }
    if (req.method === 'GET' && path === '/_test/seen') {
      const subjects = Object.fromEntries(Object.entries(seen.subjects).map(([sub, { token_hashes, ...counts }]) => [sub, counts]));
      const open = Object.fromEntries([...sessions].map(([id, session]) => [id, { sub: session.sub, notes: session.notes.length }]));
      return json(res, 200, { subjects, refused: seen.refused, sessions: open });
    }
    return json(res, 404, { error: 'not_found' });
  } catch (error) {
    log(`error on ${req.method} ${path}: ${error.stack ?? error}`);
    if (!res.headersSent) json(res, 500, { error: 'server_error' });
    else res.end();
  }
});

process.stdout.write(`ready ${mcpUrl}\n`);
process.stdin.on('end', () => process.exit(0));
process.stdin.on('close', () => process.exit(0));
process.stdin.resume();
process.on('SIGTERM', () => process.exit(0));
